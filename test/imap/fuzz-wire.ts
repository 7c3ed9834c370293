/**
 * What the IMAP fuzz files share: a bare TLS connection that keeps what it reads, an exchange that
 * insists on a tagged answer or an orderly BYE within a bound, and the closing check that the
 * server still serves a real client (imapflow: login, select, fetch) and its API.
 */
import type { ExecutionContext } from 'ava';
import net from 'node:net';
import tls from 'node:tls';
import { imapClient, PASSWORD } from '../helpers/imap.js';
import type { TestClient } from '../helpers/app.js';

/** A raw IMAPS connection: everything read so far (latin1), and whether it closed. */
export interface Wire {
  text: string;
  closed: boolean;
  socket: net.Socket;
}

/**
 * Opens a connection from `from` (a 127.0.0.x address: hostile logins lock out their own address,
 * never the one the closing real client comes from) and waits for the greeting; `plain` for the
 * STARTTLS port before STARTTLS.
 */
export async function open(port: number, from = '127.0.0.2', o: { plain?: boolean } = {}): Promise<Wire> {
  const raw = net.connect({ port, host: '127.0.0.1', localAddress: from });
  const socket = o.plain ? raw : tls.connect({ socket: raw, rejectUnauthorized: false });
  const c: Wire = { text: '', closed: false, socket };
  socket.on('data', (d: Buffer) => { c.text += d.toString('latin1'); });
  socket.on('error', () => undefined);
  socket.on('close', () => { c.closed = true; });
  if (!(await waitFor(c, /^\* OK/m, 0, 20_000))) throw new Error(`no greeting: ${JSON.stringify(c.text)}`);
  return c;
}

/** Waits (bounded) until `re` matches the text read since `from`; false when the connection closed first or time ran out. */
export async function waitFor(c: Wire, re: RegExp, from: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (re.test(c.text.slice(from))) return true;
    if (c.closed || Date.now() > deadline) return re.test(c.text.slice(from));
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Waits (bounded) for the connection to close. */
export async function waitClosed(c: Wire, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!c.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return c.closed;
}

export const tagged = (tag: string) => new RegExp(`^${tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (OK|NO|BAD)[ \\r]`, 'm');

/** A connection logged in as `user` (and with INBOX selected when `select`). */
export async function loggedIn(port: number, user: string, o: { select?: boolean; from?: string } = {}): Promise<Wire> {
  const c = await open(port, o.from ?? '127.0.0.3');
  c.socket.write(`l LOGIN ${user} ${PASSWORD}\r\n${o.select ? 's SELECT INBOX\r\n' : ''}`);
  if (!(await waitFor(c, o.select ? /^s OK/m : /^l OK/m, 0, 30_000))) throw new Error(`could not log in: ${c.text.slice(-500)}`);
  return c;
}

export type Outcome = 'answered' | 'bye';

/**
 * Sends `bytes` (one command, its literals included) and waits for `tag`'s answer. A command left
 * waiting for literal bytes it announced is completed with `pad` and CRLF; the server must then
 * answer (`pad` when the input knows how many bytes it held back). Whatever happens must be a tagged OK/NO/BAD or `* BYE` and a close: anything else (silence,
 * a close without BYE, an internal error) throws with the input, which is the report of a bug.
 */
export async function exchange(c: Wire, bytes: Buffer | string | Array<Buffer | string>, tag: string, o: { ms?: number; label?: string; pad?: Buffer } = {}): Promise<Outcome> {
  const from = c.text.length;
  // Several parts go as separate writes: the server reads them across chunk boundaries.
  for (const part of Array.isArray(bytes) ? bytes : [bytes]) c.socket.write(part);
  const ms = o.ms ?? 10_000;
  const answer = tagged(tag);
  let ok = await waitFor(c, answer, from, Math.min(ms, 1500));
  if (!ok && !c.closed && !/^\* BYE/m.test(c.text.slice(from))) {
    // Maybe inside a literal, AUTHENTICATE or IDLE: finish it, then the tag must be answered.
    c.socket.write(o.pad ?? `${'x'.repeat(64)}\r\n`);
    ok = await waitFor(c, answer, from, ms);
  }
  const said = c.text.slice(from);
  // An internal error is the server's fault, never the answer to a client's input.
  if (/^\S+ NO \[SERVERBUG\]/m.test(said)) throw new Error(`${o.label ?? `input ${show(flat(bytes))}`}: internal error; read ${JSON.stringify(said.slice(0, 400))}`);
  if (ok) return 'answered';
  if (/^\* BYE/m.test(said)) {
    if (!(await waitClosed(c))) throw new Error(`${o.label ?? `input ${show(flat(bytes))}`}: BYE but the connection stayed open`);
    return 'bye';
  }
  const why = c.closed ? 'closed without BYE' : 'no answer';
  throw new Error(`${o.label ?? `input ${show(flat(bytes))}`}: ${why}; read ${JSON.stringify(said.slice(0, 400))}`);
}

const flat = (b: Buffer | string | Array<Buffer | string>) => (Array.isArray(b) ? Buffer.concat(b.map((x) => Buffer.from(x))) : b);

/** An input as a short printable string for a failure message. */
export const show = (b: Buffer | string) => JSON.stringify((typeof b === 'string' ? b : b.toString('latin1')).slice(0, 300));

/** mulberry32, as fuzz-lines.ts: the same seed gives the same campaign. */
export { prng } from './fuzz-lines.js';

/**
 * The campaign left the server whole: a real client logs in from an address no fuzz input used,
 * selects INBOX and fetches a message delivered after the campaign, and /api/health answers 200.
 */
export async function stillServes(t: ExecutionContext, app: TestClient, imapPort: number, address: string, subject: string): Promise<void> {
  const client = await imapClient(t, imapPort, address);
  const lock = await client.getMailboxLock('INBOX');
  try {
    const deadline = Date.now() + 30_000;
    let found = false;
    while (!found && Date.now() < deadline) {
      for await (const m of client.fetch('1:*', { envelope: true, source: true })) {
        if (m.envelope?.subject === subject && m.source && m.source.length > 0) found = true;
      }
      if (!found) await client.noop();
    }
    t.true(found, `a real client fetched "${subject}" after the campaign`);
  } finally {
    lock.release();
  }
  t.is((await app.get('/health')).status, 200, '/api/health answers 200');
}
