import tls from 'node:tls';
import net from 'node:net';
import type { ExecutionContext } from 'ava';
import { ImapFlow } from 'imapflow';
import type { Clock } from '../../src/clock.js';
import { startTestApp } from './app.js';
import { makeInbox, type Inbox } from './emails.js';

export const PASSWORD = 'password-123';

/** A running app with mailboxes (password PASSWORD); `imapPort` is IMAPS, `imapStarttlsPort` the STARTTLS port. */
export async function imapApp(t: ExecutionContext, o: { clock?: Clock; count?: number; env?: Record<string, string> } = {}) {
  const app = await startTestApp(t, { clock: o.clock, env: o.env });
  const box = await makeInbox(app, { count: o.count });
  return { app, box, imapPort: app.imapPort, imapStarttlsPort: app.imapStarttlsPort };
}

/** An imapflow client logged in over implicit TLS (closed after the test). */
export async function imapClient(t: ExecutionContext, port: number, user: string, pass = PASSWORD, o: { qresync?: boolean } = {}): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: '127.0.0.1', port, secure: true, auth: { user, pass }, logger: false,
    tls: { rejectUnauthorized: false }, qresync: o.qresync ?? false, connectionTimeout: 20_000, greetingTimeout: 20_000,
  });
  client.on('error', () => undefined);
  await client.connect();
  t.teardown(() => client.logout().catch(() => client.close()));
  return client;
}

/**
 * A bare IMAP connection for exact exchanges and hostile input: `send` writes raw bytes, `until`
 * waits (bounded) for a line matching a pattern and returns everything read so far.
 */
export async function rawImap(t: ExecutionContext, port: number, o: { secure?: boolean } = {}) {
  const socket: net.Socket = o.secure === false
    ? net.connect(port, '127.0.0.1')
    : tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
  let buf = '';
  let closed = false;
  let current: net.Socket = socket;
  const onData = (d: Buffer) => { buf += d.toString('latin1'); };
  socket.on('data', onData);
  socket.on('error', () => undefined);
  socket.on('close', () => { closed = true; });
  t.teardown(() => current.destroy());
  const api = {
    get closed() { return closed; },
    text: () => buf,
    send(data: string | Buffer) { current.write(data); },
    /** Waits for a line matching `re` after position `from`; returns the text from `from`. */
    async until(re: RegExp, timeoutMs = 15_000, from = 0): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const part = buf.slice(from);
        if (part.split('\r\n').some((l) => re.test(l))) return part;
        if (closed || Date.now() > deadline) throw new Error(`no line matching ${re} in: ${part.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    /** Sends a tagged command and waits for its tagged answer; returns the lines in between. */
    async cmd(tag: string, command: string, timeoutMs = 15_000): Promise<string> {
      const from = buf.length;
      current.write(`${tag} ${command}\r\n`);
      return api.until(new RegExp(`^${tag} (OK|NO|BAD)`), timeoutMs, from);
    },
    /** Wraps the plain socket in TLS (after STARTTLS). */
    async startTls(): Promise<void> {
      socket.off('data', onData);
      const secure = tls.connect({ socket, rejectUnauthorized: false });
      await new Promise<void>((resolve, reject) => { secure.once('secureConnect', () => resolve()); secure.once('error', reject); });
      secure.on('data', onData);
      secure.on('close', () => { closed = true; });
      current = secure;
    },
  };
  await api.until(/^\* OK/);
  return api;
}
export type RawImap = Awaited<ReturnType<typeof rawImap>>;
export type { Inbox };

/** APPENDs a message (a literal8 when `binary`) on a logged-in raw connection; answers the tagged reply. */
export async function appendRaw(c: RawImap, tag: string, folder: string, msg: string | Buffer, o: { flags?: string; binary?: boolean } = {}): Promise<string> {
  const bytes = Buffer.isBuffer(msg) ? msg : Buffer.from(msg, 'latin1');
  const from = c.text().length;
  c.send(Buffer.concat([Buffer.from(`${tag} APPEND ${folder} ${o.flags ? `(${o.flags}) ` : ''}${o.binary ? '~' : ''}{${bytes.length}+}\r\n`), bytes, Buffer.from('\r\n')]));
  const reply = await c.until(new RegExp(`^${tag} (OK|NO|BAD)`), 15_000, from);
  return reply.split('\r\n').find((l) => l.startsWith(`${tag} `))!;
}

/** The bytes of the first literal (or quoted string) after `item` in a FETCH reply, as latin1 text. */
export function fetchedValue(reply: string, item: string): string {
  const at = reply.indexOf(item);
  if (at < 0) throw new Error(`no ${item} in ${reply.slice(0, 500)}`);
  const rest = reply.slice(at + item.length);
  const lit = /^ ~?\{(\d+)\}\r\n/.exec(rest);
  if (lit) return rest.slice(lit[0].length, lit[0].length + Number(lit[1]));
  const q = /^ "((?:[^"\\]|\\.)*)"/.exec(rest);
  if (q) return q[1].replace(/\\(.)/g, '$1');
  throw new Error(`no value after ${item} in ${rest.slice(0, 200)}`);
}

/**
 * Two raw sessions on a mailbox whose INBOX holds a1, a2, a3: `a` selected INBOX (told 3 EXISTS),
 * then `b` expunged message `expunged`, which `a` has not been told of yet. `before` runs in `a`
 * ahead of its SELECT (e.g. to create a folder).
 */
export async function pendingExpunge(t: ExecutionContext, expunged: number, before?: (a: RawImap) => Promise<void>) {
  const { box, imapPort } = await imapApp(t);
  const a = await rawImap(t, imapPort);
  t.regex(await a.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  for (const tag of ['a1', 'a2', 'a3']) t.regex(await appendRaw(a, tag, 'INBOX', `From: a@x.example\r\nSubject: ${tag}\r\n\r\nbody\r\n`), /^a\d OK/);
  await before?.(a);
  t.regex(await a.cmd('s', 'SELECT INBOX'), /\* 3 EXISTS/);
  const b = await rawImap(t, imapPort);
  t.regex(await b.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  await b.cmd('s', 'SELECT INBOX');
  t.regex(await b.cmd('d', `STORE ${expunged} +FLAGS (\\Deleted)`), /^d OK/m);
  t.regex(await b.cmd('e', 'EXPUNGE'), new RegExp(`\\* ${expunged} EXPUNGE`));
  return { a, b };
}
