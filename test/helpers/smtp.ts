import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate } from 'selfsigned';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { TestClient } from './app.js';
import { createMailbox, mailboxRow } from './mailboxes.js';

/** Where the mail corpus lives. */
export const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mail');

/** One expected attachment of a corpus message. */
export interface ExpectedAttachment {
  filename: string;
  content_type: string;
  size: number;
  content_id: string | null;
  disposition: string | null;
  sha256: string;
}

/** What a corpus message must come out as, in the API's field names. */
export interface FixtureSpec {
  description: string;
  /** MAIL FROM to send it with; "" is the null sender. Default: a plain sender address. */
  mail_from?: string;
  expect: {
    /** The exact `<id>`, or "generated" for `<uuid@hostname>`. */
    message_id: string;
    from_email: string;
    from_name: string | null;
    subject: string;
    cc: string[];
    bcc: string[];
    /** ISO time, or "arrival" for the time the server received it. */
    received_at: string;
    body_text: string | null;
    body_html: string | null;
    /** Every header except `received` (checked on its own). */
    headers: Record<string, string | string[]>;
    attachments: ExpectedAttachment[] | { count: number; first: ExpectedAttachment[]; last: ExpectedAttachment[] };
  };
}

/** A corpus message: its file name, the bytes as they travel over SMTP (CRLF line ends) and its expectations. */
export interface Fixture {
  name: string;
  raw: Buffer;
  spec: FixtureSpec;
}

/** The default envelope sender of corpus messages. */
export const FIXTURE_SENDER = 'sender@client.example';

/** Every corpus message, in file-name order. Files are stored with LF line ends; SMTP carries CRLF. */
export function loadFixtures(): Fixture[] {
  return readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.eml')).sort().map((name) => {
    const bytes = readFileSync(join(FIXTURE_DIR, name)).toString('latin1').replace(/\r?\n/g, '\r\n');
    const spec = JSON.parse(readFileSync(join(FIXTURE_DIR, name.replace(/\.eml$/, '.json')), 'utf8')) as FixtureSpec;
    return { name, raw: Buffer.from(bytes, 'latin1'), spec };
  });
}

/** The attachments of a spec as one list (`count`-style specs give their first and last entries). */
export function expectedAttachmentSample(spec: FixtureSpec): { count: number; check: Array<[number, ExpectedAttachment]> } {
  const a = spec.expect.attachments;
  if (Array.isArray(a)) return { count: a.length, check: a.map((x, i) => [i, x]) };
  return { count: a.count, check: [...a.first.map((x, i) => [i, x] as [number, ExpectedAttachment]), ...a.last.map((x, i) => [a.count - a.last.length + i, x] as [number, ExpectedAttachment])] };
}

/** Options of a test SMTP client. */
export interface ClientOptions {
  /** STARTTLS: 'require' fails when not offered, 'ignore' never upgrades (default). */
  tls?: 'require' | 'ignore';
  name?: string;
  /** The client's own address (a DNSBL test connects from 127.0.0.2). */
  localAddress?: string;
}

/** A connected nodemailer SMTP client (EHLO done); closed by the caller or at the end of the test. */
export async function smtpClient(port: number, opts: ClientOptions = {}): Promise<SMTPConnection> {
  const connection = new SMTPConnection({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: opts.tls !== 'require',
    requireTLS: opts.tls === 'require',
    tls: { rejectUnauthorized: false },
    name: opts.name ?? 'client.example',
    localAddress: opts.localAddress,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  connection.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => connection.connect((err) => (err ? reject(err) : resolve())));
  return connection;
}

/** The result of one message sent over SMTP. */
export interface SendResult {
  accepted: string[];
  rejected: string[];
  rejectedErrors: Array<{ recipient?: string; response?: string; responseCode?: number }>;
  response: string;
}

/** Sends one message on an open client; rejects with the server's error (err.responseCode, err.response). */
export function sendOn(connection: SMTPConnection, envelope: { from: string; to: string[]; size?: number }, raw: Buffer | string): Promise<SendResult> {
  return new Promise((resolve, reject) => {
    connection.send({ from: envelope.from === '' ? false : envelope.from, to: envelope.to, size: envelope.size }, raw, (err, info) => {
      if (err) reject(err);
      else resolve(info as unknown as SendResult);
    });
  });
}

/** Opens a session, sends one message, quits. */
export async function sendMail(port: number, envelope: { from: string; to: string[]; size?: number }, raw: Buffer | string, opts: ClientOptions = {}): Promise<SendResult> {
  const connection = await smtpClient(port, opts);
  try {
    return await sendOn(connection, envelope, raw);
  } finally {
    connection.quit();
  }
}

/** A line-level SMTP session for protocol edge cases nodemailer would not send. */
export interface RawSession {
  /** The greeting line(s). */
  greeting: string;
  /** Sends one command line and resolves with the complete (possibly multi-line) reply. */
  command(line: string): Promise<string>;
  /** Sends bytes without waiting for a reply (a DATA body, pipelined commands). */
  write(data: string | Buffer): void;
  /** Waits for the next complete reply. */
  reply(): Promise<string>;
  close(): void;
  socket: Socket;
}

/** Opens a raw SMTP session on 127.0.0.1:port and reads the greeting. */
export function rawSession(port: number, timeoutMs = 15_000): Promise<RawSession> {
  return new Promise((resolveSession, rejectSession) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = '';
    const waiters: Array<{ resolve: (s: string) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }> = [];
    const take = () => {
      // A reply ends with a line "NNN text" (no dash after the code).
      const lines = buffer.split('\r\n');
      for (let i = 0; i < lines.length - 1; i++) {
        if (/^\d{3}(?: |$)/.test(lines[i])) {
          const reply = lines.slice(0, i + 1).join('\r\n');
          buffer = lines.slice(i + 1).join('\r\n');
          return reply;
        }
      }
      return null;
    };
    const pump = () => {
      while (waiters.length > 0) {
        const reply = take();
        if (reply === null) return;
        const w = waiters.shift()!;
        clearTimeout(w.timer);
        w.resolve(reply);
      }
    };
    let closed = false;
    const next = () => new Promise<string>((resolve, reject) => {
      if (closed) {
        const left = take();
        return left === null ? reject(new Error(`connection closed; buffer: ${JSON.stringify(buffer)}`)) : resolve(left);
      }
      const timer = setTimeout(() => reject(new Error(`no SMTP reply within ${timeoutMs} ms; buffer: ${JSON.stringify(buffer)}`)), timeoutMs);
      waiters.push({ resolve, reject, timer });
      pump();
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => { buffer += chunk; pump(); });
    socket.on('close', () => {
      closed = true;
      for (const w of waiters.splice(0)) { clearTimeout(w.timer); w.reject(new Error(`connection closed; buffer: ${JSON.stringify(buffer)}`)); }
    });
    socket.on('error', (err) => rejectSession(err));
    socket.once('connect', () => {
      next().then((greeting) => resolveSession({
        greeting,
        command: (line) => { socket.write(line + '\r\n'); return next(); },
        write: (data) => { socket.write(data); },
        reply: next,
        close: () => socket.destroy(),
        socket,
      }), rejectSession);
    });
  });
}

/** A provisioned domain with mailboxes, made through the real API, ready to receive mail. */
export interface MailSetup {
  key: string;
  domain: string;
  /** Mailbox id by address. */
  mailboxes: Record<string, number>;
}

/** Creates a domain and one mailbox per local part through the API and waits for the tasks. */
export async function provision(app: TestClient, domain: string, locals: string[], key?: string): Promise<MailSetup> {
  const k = key ?? await app.keyFor();
  await app.domain(k, domain);
  const mailboxes: Record<string, number> = {};
  for (const local of locals) {
    const address = `${local}@${domain}`;
    const done = await createMailbox(app, k, domain, address, 'correct horse battery');
    if (done.body.status !== 'completed') throw new Error(`mailbox ${address}: ${JSON.stringify(done.body)}`);
    const row = await mailboxRow(app, address);
    if (!row) throw new Error(`mailbox ${address} has no row`);
    mailboxes[address] = row.id;
  }
  return { key: k, domain, mailboxes };
}

/** The inbox helpers of the emails tests (query strings may start with `&`). */
export { listAll, waitForEmails } from './emails.js';

/** A self-signed certificate and key (PEM) for `commonName`, generated now. */
export async function certificate(commonName: string): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: commonName }], { keySize: 2048, algorithm: 'sha256' });
  return { cert: pems.cert, key: pems.private };
}

/** Issues STARTTLS on a raw session (after EHLO) and returns the common name of the server's certificate. */
export async function peerCommonName(s: RawSession): Promise<string> {
  const reply = await s.command('STARTTLS');
  if (!reply.startsWith('220 ')) throw new Error(`STARTTLS refused: ${reply}`);
  s.socket.removeAllListeners('data');
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ socket: s.socket, rejectUnauthorized: false, servername: 'mx.mailstead.test' }, () => {
      const cn = secure.getPeerCertificate().subject?.CN;
      secure.destroy();
      resolve(Array.isArray(cn) ? cn[0] : String(cn));
    });
    secure.once('error', reject);
  });
}

/**
 * Sends `count` messages over `connections` SMTP connections at once, each connection taking the
 * next number until all are sent; `send` sends message n on a connection and checks its answer.
 */
export async function sendOverConnections(port: number, count: number, connections: number, send: (c: SMTPConnection, n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    const c = await smtpClient(port);
    try {
      while (next < count) await send(c, next++);
    } finally {
      c.quit();
    }
  }));
}
