import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ExecutionContext } from 'ava';
import nodemailer from 'nodemailer';
import type { Clock } from '../../src/clock.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { makeInbox, type Inbox } from '../helpers/emails.js';

export const PASSWORD = 'password-123';

/** A running app with a tenant, a domain and `count` mailboxes (inbox0@..., password PASSWORD). */
export async function submissionApp(t: ExecutionContext, o: { clock?: Clock; count?: number; env?: Record<string, string> } = {}): Promise<{ app: TestClient; box: Inbox }> {
  const app = await startTestApp(t, { clock: o.clock, env: o.env });
  const box = await makeInbox(app, { count: o.count ?? 1 });
  return { app, box };
}

/** Which of the two listeners a client talks to. */
export type Port = 'starttls' | 'implicit';

/** A nodemailer transport to a submission port, logged in as `user` (PLAIN unless `method` says LOGIN). */
export function transport(app: TestClient, port: Port, user: string, pass = PASSWORD, method?: 'PLAIN' | 'LOGIN') {
  const implicit = port === 'implicit';
  return nodemailer.createTransport({
    host: '127.0.0.1', port: implicit ? app.submissionsPort : app.submissionPort, secure: implicit, requireTLS: !implicit,
    tls: { rejectUnauthorized: false }, auth: { user, pass }, ...(method ? { authMethod: method } : {}),
    connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000,
  });
}

/** An SMTP error as nodemailer reports it. */
export interface SmtpError { responseCode?: number; response?: string; code?: string }

/** Sends one message (raw bytes with an explicit envelope) and answers the info, or the error it failed with. */
export async function submit(app: TestClient, port: Port, user: string, envelope: { from: string; to: string[] }, raw: string | Buffer, pass = PASSWORD) {
  const tr = transport(app, port, user, pass);
  try {
    const info = await tr.sendMail({ envelope, raw });
    return { ok: true as const, info };
  } catch (err) {
    return { ok: false as const, err: err as SmtpError };
  } finally {
    tr.close();
  }
}

/** A small message, CRLF line ends; `headers` come first and may replace From. */
export function rawMessage(o: { from: string; to: string; subject: string; headers?: string; messageId?: boolean; body?: string }): string {
  const id = o.messageId === false ? '' : `Message-ID: <${o.subject.replace(/\W/g, '')}.${Date.now()}@client.test>\r\nDate: Thu, 26 Nov 2026 04:00:00 +0000\r\n`;
  const from = o.headers?.match(/^From:/im) ? '' : `From: <${o.from}>\r\n`;
  return `${o.headers ?? ''}${from}To: <${o.to}>\r\nSubject: ${o.subject}\r\n${id}\r\n${o.body ?? `Hello from ${o.from}.`}\r\n`;
}

/**
 * A line-level session for what nodemailer would not send: `cmd` writes a line and waits for the
 * whole reply; `starttls` upgrades; closed after the test.
 */
export async function lineSession(t: ExecutionContext, port: number, implicitTls: boolean) {
  let socket: Socket = implicitTls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : netConnect(port, '127.0.0.1');
  let buffer = '';
  let closed = false;
  const attach = (s: Socket) => {
    s.setEncoding('latin1');
    s.on('data', (d: string) => { buffer += d; });
    s.on('error', () => undefined);
    s.on('close', () => { closed = true; });
  };
  attach(socket);
  t.teardown(() => socket.destroy());
  /** The next complete reply (its last line is `NNN text`), waited for up to 30 s (a loaded machine hashes passwords slowly). */
  async function reply(): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const lines = buffer.split('\r\n');
      const end = lines.findIndex((l, i) => i < lines.length - 1 && /^\d{3}(?: |$)/.test(l));
      if (end >= 0) {
        const text = lines.slice(0, end + 1).join('\r\n');
        buffer = lines.slice(end + 1).join('\r\n');
        return text;
      }
      if (closed) throw new Error(`connection closed; buffer: ${JSON.stringify(buffer)}`);
      if (Date.now() > deadline) throw new Error(`no reply; buffer: ${JSON.stringify(buffer)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const greeting = await reply();
  return {
    greeting,
    get closed() { return closed; },
    reply,
    async cmd(line: string): Promise<string> { socket.write(line + '\r\n'); return reply(); },
    write(data: string) { socket.write(data); },
    /** STARTTLS and the TLS handshake; the session then continues encrypted. */
    async starttls(): Promise<void> {
      const r = await this.cmd('STARTTLS');
      if (!r.startsWith('220')) throw new Error(`STARTTLS refused: ${r}`);
      const plain = socket;
      plain.removeAllListeners('data');
      socket = await new Promise<Socket>((resolve, reject) => {
        const s = tlsConnect({ socket: plain, rejectUnauthorized: false }, () => resolve(s));
        s.once('error', reject);
      });
      attach(socket);
    },
  };
}

/** PLAIN's initial response: authzid NUL authcid NUL password, base64. */
export const plainToken = (user: string, pass: string, authz = '') => Buffer.from(`${authz}\0${user}\0${pass}`).toString('base64');
