import type { Logger } from '../logger.js';
import type { LoginAttempt } from '../mailboxes/lockout.js';
import type { MailboxLogin } from '../mailboxes/logins.js';
import type { SieveStore } from '../sieve-store/store.js';
import { CommandReader, type Token } from './parser.js';
import { responseLine, utf8 } from './wire.js';

/** What a session is built from (one set per listener). */
export interface SessionDeps {
  scripts: SieveStore;
  logins: { verify(address: string, password: string): Promise<MailboxLogin | null> };
  lockout: { begin(ip: string): Promise<LoginAttempt | null> };
  logger: Logger;
  /** Whether STARTTLS can be offered (a certificate is there). */
  tlsAvailable: boolean;
}

/** The socket side of a session (server.ts). */
export interface Conn {
  readonly ip: string;
  readonly secure: boolean;
  write(text: string): void;
  /** Wraps the socket in TLS after the OK to STARTTLS has left. */
  upgrade(): Promise<boolean>;
  close(): void;
}

/** A refusal with a ManageSieve response code, answered NO. */
export class SieveNo extends Error {
  constructor(message: string, readonly code?: string) { super(message); }
}

/** One command family: name to runner. */
export type CommandRunner = (s: Session, args: Arguments) => Promise<void>;
export interface CommandSpec { states: ReadonlyArray<'notauth' | 'auth'>; run: CommandRunner }

/** The arguments of one command, taken in order with the type each must have. */
export class Arguments {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}
  /** A string argument (quoted or literal), as UTF-8 text. */
  string(what: string): string {
    const t = this.tokens[this.i++];
    if (!t || t.kind !== 'string') throw new SieveNo(`${what} must be a string`);
    const text = utf8(t.bytes);
    if (text === null) throw new SieveNo(`${what} is not UTF-8`);
    return text;
  }
  optionalString(what: string): string | null {
    return this.i < this.tokens.length ? this.string(what) : null;
  }
  number(what: string): number {
    const t = this.tokens[this.i++];
    if (!t || t.kind !== 'atom' || !/^[0-9]{1,10}$/.test(t.text)) throw new SieveNo(`${what} must be a number`);
    return Number(t.text);
  }
  /** Refuses arguments beyond those taken. */
  end(): void {
    if (this.i < this.tokens.length) throw new SieveNo('too many arguments');
  }
}

/** Bad commands in a row after which the connection is ended. */
const MAX_BAD_COMMANDS = 20;

/**
 * One ManageSieve connection: reads commands, runs them one at a time in order, and keeps the
 * state (not authenticated, authenticated, TLS). Commands live in commands/, one file per family.
 */
export class Session {
  state: 'notauth' | 'auth' | 'closed' = 'notauth';
  login: MailboxLogin | null = null;
  /** A SASL exchange waiting for the client's response line. */
  saslWaiting: ((response: Token[]) => Promise<void>) | null = null;
  private readonly reader = new CommandReader();
  private running = false;
  private bad = 0;

  constructor(readonly conn: Conn, readonly deps: SessionDeps, private readonly commands: Record<string, CommandSpec>, readonly capabilities: () => string) {}

  greet(): void {
    this.conn.write(this.capabilities());
    this.ok('Mailstead ManageSieve ready');
  }

  ok(text: string, code?: string): void { this.conn.write(responseLine('OK', text, code)); }
  no(text: string, code?: string): void { this.conn.write(responseLine('NO', text, code)); }
  send(text: string): void { this.conn.write(text); }

  bye(text: string, code?: string): void {
    if (this.state === 'closed') return;
    this.conn.write(responseLine('BYE', text, code));
    this.close();
  }

  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.conn.close();
  }

  /** Input arrived. */
  push(data: Buffer): void {
    if (this.state === 'closed') return;
    this.reader.push(data);
    void this.pump();
  }

  /** After STARTTLS: nothing sent before the handshake may run. */
  discardInput(): void { this.reader.discard(); }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.state !== 'closed') {
        const parsed = this.reader.next();
        if (!parsed) break;
        if (parsed.kind === 'fatal') { this.bye(parsed.reason); break; }
        if (parsed.kind === 'bad') { this.refuse(parsed.reason); continue; }
        if (this.saslWaiting) {
          const waiting = this.saslWaiting;
          this.saslWaiting = null;
          await waiting(parsed.tokens);
          continue;
        }
        await this.run(parsed.tokens);
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'managesieve command failed');
      this.bye('internal error', 'TRYLATER');
    } finally {
      this.running = false;
    }
  }

  private refuse(reason: string): void {
    if (this.saslWaiting) { this.saslWaiting = null; this.no('Authentication failed: malformed response'); }
    else this.no(reason);
    if (++this.bad >= MAX_BAD_COMMANDS) this.bye('too many bad commands');
  }

  private async run(tokens: Token[]): Promise<void> {
    const first = tokens[0]!;
    const name = first.kind === 'atom' ? first.text.toUpperCase() : '';
    const spec = this.commands[name];
    if (!spec) { this.refuse(name ? `unknown command ${name.slice(0, 30)}` : 'command name expected'); return; }
    if (this.state === 'closed' || !spec.states.includes(this.state)) {
      this.refuse(this.state === 'notauth' ? 'authenticate first' : `${name} is not allowed now`);
      return;
    }
    try {
      await spec.run(this, new Arguments(tokens.slice(1)));
      this.bad = 0;
    } catch (err) {
      if (!(err instanceof SieveNo)) throw err;
      // A command refused with a reason (a missing script, a quota) is not a bad command.
      if (err.code !== undefined) this.no(err.message, err.code);
      else this.refuse(err.message);
    }
  }
}
