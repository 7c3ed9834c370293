import type { Logger } from '../../logger.js';
import type { IdleWatch } from '../idle-watch.js';
import type { MailboxLogin } from '../../mailboxes/logins.js';
import type { RecentClaims } from '../recent.js';
import type { Mailstore } from '../mailstore.js';
import { ParseError, Parser } from './parser.js';
import { CommandReader, MAX_LINE, MAX_LITERAL } from './reader.js';
import { FolderView } from '../view.js';
import type { Piece } from './wire.js';

/** RFC 9051 section 3: the connection's state. */
export type State = 'notauth' | 'auth' | 'selected' | 'logout';

/** A refusal with NO (and a response code such as OVERQUOTA). */
export class ImapNo extends Error {
  constructor(message: string, readonly code?: string) { super(message); }
}
/** A refusal with BAD. */
export class ImapBad extends Error {}

/** A command's implementation: reads its arguments from `p` and answers (tagged) through the session. */
export type Handler = (s: Session, tag: string, p: Parser, o: { uid: boolean }) => Promise<void>;
export interface CommandSpec { states: readonly State[]; run: Handler; uid?: boolean }

/** The transport under a session: socket writes, STARTTLS, close. */
export interface Conn {
  write(data: Piece[] | string): void;
  readonly secure: boolean;
  /** Whether this listener offers STARTTLS (143). */
  readonly starttls: boolean;
  readonly ip: string;
  upgrade(): Promise<void>;
  /** Resolves once the socket's buffer has room again (at once when it has, or the socket is gone). */
  drain(): Promise<void>;
  close(): void;
}

/** Shared by every session of a server. */
export interface SessionDeps {
  store: Mailstore;
  logger: Logger;
  commands: Map<string, CommandSpec>;
  /** Wakes idling sessions when their mail changes. */
  idle: IdleWatch;
  /** Which messages some session has seen as \Recent. */
  recent: RecentClaims;
  /** Tells kept searches what joined or left their result (context.ts), given the command's removals. */
  updateLiveSearches?(s: Session, removed: Array<{ seq: number; uid: number }>): Promise<void>;
  /** Counts sessions per mailbox; false when the mailbox has its 20. */
  claim(mailboxId: number): boolean;
  release(mailboxId: number): void;
}

/** Input a client may send ahead of the command being run: one largest APPEND and some lines. */
const MAX_PENDING = MAX_LITERAL + 4 * MAX_LINE;

const CAPS_COMMON = ['IMAP4rev2', 'IMAP4rev1', 'LITERAL+', 'ID', 'ENABLE', 'IDLE', 'NAMESPACE', 'UIDPLUS', 'MOVE', 'UNSELECT',
  'SPECIAL-USE', 'LIST-EXTENDED', 'LIST-STATUS', 'CONDSTORE', 'QRESYNC', 'QUOTA', 'QUOTA=RES-STORAGE', 'APPENDLIMIT=26214400',
  'ESEARCH', 'SEARCHRES', 'BINARY', 'STATUS=SIZE', 'SASL-IR', 'SORT', 'SORT=DISPLAY', 'ESORT', 'MULTIAPPEND', 'THREAD=REFERENCES', 'THREAD=ORDEREDSUBJECT', 'CONTEXT=SEARCH'];

/**
 * A SEARCH RETURN (UPDATE) kept up to date (CONTEXT=SEARCH, RFC 5267 section 4). The session holds
 * it; commands/context.ts runs it again after each command. Its program is the search command's
 * own, opaque to the protocol layer.
 */
export interface LiveSearch {
  tag: string;
  program: unknown;
  uid: boolean;
  /** UIDs of the messages the client was told match, ascending. */
  uids: number[];
}

/**
 * Commands during which another session's EXPUNGE is not announced: FETCH, STORE and SEARCH by
 * RFC 9051 7.5.1, and COPY and MOVE, whose sequence numbers name messages as the client knew them
 * when it sent the command (announcing an expunge first would shift them under it: a COPY of the
 * last message would then name one past the end). Their UID forms announce as usual.
 */
const NO_EXPUNGE = new Set(['FETCH', 'STORE', 'SEARCH', 'COPY', 'MOVE']);

/**
 * One IMAP connection: reads whole commands (reader.ts), runs them one at a time in the order
 * received, and keeps the state of RFC 9051 section 3 (not authenticated, authenticated, selected,
 * logout). After each command it announces what changed in the selected folder, whichever face
 * changed it. A command that breaks the grammar is answered BAD; one that fails on the server NO;
 * nothing a client sends ends the process.
 */
export class Session {
  state: State = 'notauth';
  login: MailboxLogin | null = null;
  private selected: FolderView | null = null;
  /** The selected folder as this client knows it; kept searches end with it. */
  get view(): FolderView | null { return this.selected; }
  set view(v: FolderView | null) {
    if (v !== this.selected) this.liveSearches.clear();
    this.selected = v;
  }
  enabled = new Set<string>();
  /** Searches kept up to date (SEARCH RETURN (UPDATE), CONTEXT=SEARCH), by tag; dropped with the folder. */
  liveSearches = new Map<string, LiveSearch>();
  /** UIDs of the last SEARCH ... RETURN (SAVE) (`$`). */
  saved: number[] = [];
  raw: ((id: number) => Promise<Buffer>) | null = null;
  /** A command waiting for the client's next line (AUTHENTICATE continuation, IDLE's DONE). */
  private lineWaiter: ((line: string) => void) | null = null;
  private reader = new CommandReader();
  private executing = false;
  private closed = false;
  /** The command running, for what it may announce. */
  private current = { name: '', uid: false };

  constructor(readonly conn: Conn, readonly deps: SessionDeps) {}

  get store(): Mailstore { return this.deps.store; }
  get condstore(): boolean { return this.enabled.has('CONDSTORE') || this.enabled.has('QRESYNC'); }
  get qresync(): boolean { return this.enabled.has('QRESYNC'); }
  get rev2(): boolean { return this.enabled.has('IMAP4REV2'); }

  capabilities(): string {
    const tlsFirst = this.conn.starttls && !this.conn.secure;
    if (tlsFirst) return ['IMAP4rev2', 'IMAP4rev1', 'STARTTLS', 'LOGINDISABLED', 'LITERAL+', 'ID', 'ENABLE'].join(' ');
    if (this.state === 'notauth') return [...CAPS_COMMON, 'AUTH=PLAIN'].join(' ');
    return CAPS_COMMON.join(' ');
  }

  greet(): void {
    this.send(`* OK [CAPABILITY ${this.capabilities()}] Mailstead IMAP ready`);
  }

  send(line: string | Piece[]): void {
    if (this.closed) return;
    if (typeof line === 'string') { this.conn.write(line + '\r\n'); return; }
    // Adjacent text pieces go as one string: a FETCH line is dozens of pieces, each a socket write otherwise.
    const out: Piece[] = [];
    let text = '';
    for (const piece of line) {
      if (typeof piece === 'string') text += piece;
      else { if (text) out.push(text); text = ''; out.push(piece); }
    }
    out.push(text + '\r\n');
    this.conn.write(out);
  }

  ok(tag: string, text: string): void { this.send(`${tag} OK ${text}`); }

  /** Waits while the client has not read what was sent (a long FETCH must not pile up in memory). */
  drained(): Promise<void> {
    return this.closed ? Promise.resolve() : this.conn.drain();
  }

  /**
   * Ends a command: announces changes of the selected folder made by any face (expunges unless the
   * command is a non-UID FETCH, STORE or SEARCH), then the tagged OK.
   */
  async finish(tag: string, text: string): Promise<void> {
    if (this.view) await this.update(!NO_EXPUNGE.has(this.current.name) || this.current.uid);
    if (this.view && this.liveSearches.size) await this.deps.updateLiveSearches?.(this, this.view.takeRemoved());
    else this.view?.takeRemoved();
    this.ok(tag, text);
  }

  /** Drops input not yet read (at STARTTLS: nothing sent in clear text may run after it). */
  discardInput(): void {
    this.reader = new CommandReader();
  }

  /** Bytes from the client. */
  push(chunk: Buffer): void {
    this.reader.push(chunk);
    if (this.reader.pending > MAX_PENDING) {
      this.send('* BYE too much data ahead of its commands');
      this.close();
      return;
    }
    this.pump();
  }

  /**
   * Hands the client's input on: the next line to a command waiting for one, else the next command
   * to run once none is running (commands run strictly one after another).
   */
  private pump(): void {
    while (!this.closed) {
      if (this.executing && !this.lineWaiter) return;
      const next = this.reader.next();
      if (!next) return;
      if (next.kind === 'continue') { this.send('+ Ready for literal data'); continue; }
      if (next.kind === 'refuse') {
        const code = next.code ? `[${next.code}] ` : '';
        if (next.fatal) { this.send(`* BYE ${code}${next.text}`); this.close(); return; }
        this.send(`${next.tag ?? '*'} BAD ${code}${next.text}`);
        continue;
      }
      if (this.lineWaiter) {
        const w = this.lineWaiter;
        this.lineWaiter = null;
        w(next.bytes.toString('utf8'));
        continue;
      }
      this.executing = true;
      void this.run(next.bytes).finally(() => { this.executing = false; this.pump(); });
      return;
    }
  }

  /** The client's next line, for the command in progress (AUTHENTICATE's response, IDLE's DONE); '' once closed. */
  waitLine(): Promise<string> {
    return new Promise<string>((resolve) => {
      this.lineWaiter = resolve;
      this.pump();
    });
  }

  private async run(bytes: Buffer): Promise<void> {
    const p = new Parser(bytes);
    let tag = '*';
    try {
      tag = p.tag();
      p.sp();
      let name = p.atom().toUpperCase();
      let uid = false;
      if (name === 'UID') {
        uid = true;
        p.sp();
        name = p.atom().toUpperCase();
      }
      const spec = this.deps.commands.get(name);
      if (!spec || (uid && !spec.uid)) throw new ImapBad(`unknown command ${uid ? 'UID ' : ''}${name}`);
      if (!spec.states.includes(this.state)) {
        throw new ImapBad(this.state === 'notauth' ? 'log in first' : `${name} is not allowed now`);
      }
      this.current = { name, uid };
      await spec.run(this, tag, p, { uid });
    } catch (err) {
      if (this.closed) return;
      if (err instanceof ParseError || err instanceof ImapBad) this.send(`${tag} BAD ${err.message}`);
      else if (err instanceof ImapNo) this.send(`${tag} NO ${err.code ? `[${err.code}] ` : ''}${err.message}`);
      else {
        this.deps.logger.error({ err }, 'imap command failed');
        this.send(`${tag} NO [SERVERBUG] internal error`);
      }
    }
  }

  /** Reads changes of the tenant's mail since the view's marker into the view. */
  async refresh(): Promise<void> {
    const v = this.view;
    if (!v || !this.login) return;
    for (let i = 0; i < 100; i++) {
      const changes = await this.store.messages.changes(this.login.tenantId, v.marker);
      for (const c of changes) {
        v.marker = Math.max(v.marker, c.modseq);
        if (c.mailboxId === this.login.mailboxId) v.apply(c);
      }
      if (changes.length < 1000) break;
    }
  }

  /** Announces what changed in the selected folder (removals only when `expunges`). */
  flush(expunges: boolean): void {
    if (!this.view) return;
    for (const line of this.view.announce({ expunges, qresync: this.qresync, condstore: this.condstore })) this.send(line);
  }

  /**
   * Refreshes and announces what the command in progress may announce, before it answers for any
   * message: its own responses then only name sequence numbers the client was told of (EXISTS).
   */
  async sync(): Promise<void> {
    await this.update(!NO_EXPUNGE.has(this.current.name) || this.current.uid);
  }

  /**
   * CONDSTORE enabled by a command that uses it (FETCH MODSEQ, SEARCH MODSEQ, UNCHANGEDSINCE): the
   * first time, the selected folder's HIGHESTMODSEQ is told (RFC 7162 3.1).
   */
  enableCondstore(): void {
    if (this.condstore) return;
    this.enabled.add('CONDSTORE');
    if (this.view) this.send(`* OK [HIGHESTMODSEQ ${this.view.marker}] highest`);
  }

  /** Refreshes and announces (NOOP, IDLE, before a tagged answer). */
  async update(expunges = true): Promise<void> {
    await this.refresh();
    this.flush(expunges);
  }

  /** Opens the mailbox of a verified login; NO when it already has its share of connections. */
  authenticated(login: MailboxLogin): void {
    if (!this.deps.claim(login.mailboxId)) throw new ImapNo('too many connections to this mailbox', 'LIMIT');
    this.login = login;
    this.state = 'auth';
    this.raw = this.store.rawReader(login.tenantId);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.state = 'logout';
    if (this.login) this.deps.release(this.login.mailboxId);
    this.lineWaiter?.('');
    this.conn.close();
  }

  get isClosed(): boolean { return this.closed; }
}
