// The types of the Sieve engine's surface (api.ts), in a file of their own: the engine and its
// runtime read them without importing api.ts, which imports the engine.

/** A parse or runtime error, 1-based line and column. */
export interface SieveError { line: number; column: number; message: string }

/** A script that parsed and passed validation (opaque to callers). */
export interface CompiledScript { readonly extensions: readonly string[] }

export type ParseResult = { ok: true; script: CompiledScript } | { ok: false; error: SieveError };

/** What the engine needs to run a script on one delivered message. */
export interface SieveMessageInput {
  /** The message as it will be stored (RFC 5322 bytes), or only its header section when `size` is given. */
  raw: Buffer;
  /** The whole message's size when `raw` holds only the header section (a script without the body test reads no more). */
  size?: number;
  /** Envelope: MAIL FROM (null for <>), the RCPT TO address as given (with +detail), and the mailbox's own address. */
  envelope: { from: string | null; to: string };
  /** The spam score and threshold of DECISIONS.md section 18 (spamtest scales it 0-10 against the threshold). */
  spam: { score: number; threshold: number; verdict: 'ham' | 'junk' } | null;
  /** The delivered-to mailbox's address (vacation's default :addresses). */
  mailboxAddress: string;
  now: Date;
  /** Whether a folder exists (mailboxexists, fileinto without :create). */
  folderExists(name: string): boolean;
}

export type SieveAction =
  | { type: 'keep'; flags: string[] }
  | { type: 'fileinto'; folder: string; create: boolean; flags: string[]; copy: boolean }
  | { type: 'redirect'; address: string; copy: boolean }
  | { type: 'reject'; reason: string; ereject: boolean }
  | { type: 'discard' }
  | { type: 'vacation'; reason: string; subject?: string; from?: string; addresses: string[]; handle?: string;
      mime: boolean; seconds: number };

/**
 * The result of a run. `actions` always says where the message goes: an implicit keep is a `keep`
 * action; on a runtime error `error` is set and `actions` is exactly [{type:'keep', flags: []}].
 */
export interface SieveOutcome { actions: SieveAction[]; error?: SieveError }
