/**
 * What the submission fuzz files share: a raw SMTP connection from a chosen 127.0.0.x address that
 * keeps what it reads and counts whole replies, the rule every reply is held to (a well-formed
 * `NNN` line; never the 451 of a handler that failed; a close only after a 421 or 221), and the
 * closing check that a real client (nodemailer) still submits and the message is stored.
 */
import type { ExecutionContext } from 'ava';
import net from 'node:net';
import tls from 'node:tls';
import type { TestClient } from '../helpers/app.js';
import type { Inbox } from '../helpers/emails.js';
import { PASSWORD, plainToken, rawMessage, submit } from './world.js';

export { prng } from '../imap/fuzz-lines.js';

export interface Smtp {
  /** Everything read, latin1. */
  text: string;
  closed: boolean;
  socket: net.Socket;
  /** Where the replies not yet taken start. */
  at: number;
  /** A 421 or 221 was taken: the server is closing the connection. */
  farewell: boolean;
}

/** Opens a submission connection (implicit TLS or plain) from `from` and reads the 220 greeting. */
export async function openSmtp(port: number, implicitTls: boolean, from = '127.0.0.2'): Promise<Smtp> {
  const plain = net.connect({ port, host: '127.0.0.1', localAddress: from });
  const socket = implicitTls ? tls.connect({ socket: plain, rejectUnauthorized: false }) : plain;
  const c: Smtp = { text: '', closed: false, socket, at: 0, farewell: false };
  listen(c, socket);
  const [greeting] = await replies(c, 1);
  if (!greeting?.startsWith('220')) throw new Error(`no greeting: ${JSON.stringify(c.text)}`);
  return c;
}

function listen(c: Smtp, s: net.Socket): void {
  s.on('data', (d: Buffer) => { c.text += d.toString('latin1'); });
  s.on('error', () => undefined);
  s.on('close', () => { c.closed = true; });
}

/** The complete replies (`NNN-...` lines ending in `NNN ...`) after `at`, each with where it ends. */
function complete(text: string, at: number): Array<{ reply: string; end: number }> {
  const out: Array<{ reply: string; end: number }> = [];
  let start = at;
  let pos = at;
  for (;;) {
    const eol = text.indexOf('\r\n', pos);
    if (eol < 0) return out;
    const line = text.slice(pos, eol);
    if (!/^\d{3}([ -]|$)/.test(line)) throw new Error(`not a reply line: ${JSON.stringify(line)} in ${JSON.stringify(text.slice(at, at + 500))}`);
    pos = eol + 2;
    if (line[3] !== '-') { out.push({ reply: text.slice(start, eol), end: pos }); start = pos; }
  }
}

/**
 * Waits (bounded) for `n` more complete replies and takes them. Fewer come back when the connection
 * closed first, which must follow a 421 or 221; a 451 4.3.0 (a handler that failed) throws.
 */
export async function replies(c: Smtp, n: number, ms = 20_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = complete(c.text, c.at);
    if (got.length >= n || c.closed || Date.now() > deadline) {
      const taken = got.slice(0, n);
      if (taken.length) c.at = taken[taken.length - 1]!.end;
      const list = taken.map((x) => x.reply);
      for (const r of list) if (/^451 4\.3\.0/m.test(r)) throw new Error(`a handler failed: ${JSON.stringify(r)}`);
      if (list.some((r) => /^(421|221)/.test(r))) c.farewell = true;
      if (list.length < n) {
        if (!c.closed) throw new Error(`${n - list.length} replies missing after ${ms} ms: ${JSON.stringify(c.text.slice(-300))}`);
        if (!c.farewell) throw new Error(`closed without 421 or 221: ${JSON.stringify(c.text.slice(-300))}`);
      }
      return list;
    }
    await new Promise((r) => setTimeout(r, 3));
  }
}

/** Writes `line` (CRLF added) and answers its reply; null when the connection closed in good order first. */
export async function cmd(c: Smtp, line: string | Buffer): Promise<string | null> {
  c.socket.write(Buffer.concat([typeof line === 'string' ? Buffer.from(line, 'latin1') : line, Buffer.from('\r\n')]));
  const [r] = await replies(c, 1);
  return r ?? null;
}

/** STARTTLS and the handshake, on a plain connection. */
export async function startTls(c: Smtp): Promise<void> {
  const r = await cmd(c, 'STARTTLS');
  if (!r?.startsWith('220')) throw new Error(`STARTTLS refused: ${r}`);
  const plain = c.socket;
  plain.removeAllListeners('data');
  c.socket = await new Promise<net.Socket>((resolve, reject) => {
    const s = tls.connect({ socket: plain, rejectUnauthorized: false }, () => resolve(s));
    s.once('error', reject);
  });
  listen(c, c.socket);
}

/** A logged-in session on the implicit-TLS port, from an address no failed login locked out. */
export async function authed(app: TestClient, box: Inbox): Promise<Smtp> {
  const c = await openSmtp(app.submissionsPort, true, '127.0.0.3');
  await cmd(c, 'EHLO fuzz.test');
  const r = await cmd(c, `AUTH PLAIN ${plainToken(box.address, PASSWORD)}`);
  if (!r?.startsWith('235')) throw new Error(`login refused: ${r}`);
  return c;
}

/**
 * The campaign left submission whole: nodemailer (from 127.0.0.1, which no fuzz login used) submits
 * on both ports, each message is stored in the mailbox, and /api/health answers 200.
 */
export async function stillSubmits(t: ExecutionContext, app: TestClient, box: Inbox, subject: string): Promise<void> {
  for (const port of ['implicit', 'starttls'] as const) {
    const s = `${subject} ${port}`;
    const r = await submit(app, port, box.address, { from: box.address, to: [box.address] }, rawMessage({ from: box.address, to: box.address, subject: s }));
    t.true(r.ok, `nodemailer submits on the ${port} port after the campaign: ${JSON.stringify(r).slice(0, 300)}`);
    t.true(await subjectListed(app, box, s), `"${s}" is stored`);
  }
  t.is((await app.get('/health')).status, 200, '/api/health answers 200');
}

/** Polls the mailbox's list (bounded) until an email with `subject` is in it. */
export async function subjectListed(app: TestClient, box: Inbox, subject: string, ms = 30_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await app.get(`/v1/emails?per_page=100&mailbox_id=${box.mailboxId}&q=${encodeURIComponent(subject)}`, box.key);
    if (r.status === 200 && r.body.data.some((e: any) => e.subject === subject)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((res) => setTimeout(res, 50));
  }
}
