import { createServer, type Socket } from 'node:net';
import type { ExecutionContext } from 'ava';
import { SMTPServer } from 'smtp-server';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { createAlias, createMailbox } from '../helpers/mailboxes.js';
import { certificate } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import type { OutboundTesting } from '../../src/outbound/index.js';
import type { Logger } from '../../src/logger.js';
import { startMxZone, type MxZone } from './mx-zone.js';

/** One message a sink took. */
export interface SinkMessage {
  from: string;
  to: string[];
  raw: Buffer;
  secure: boolean;
}

/** How a sink answers a recipient: null accepts (250), else the reply text starting with its code. */
export type RcptAnswer = (rcpt: string) => string | null;

/**
 * A real SMTP server on 127.0.0.1 standing in for a remote MX: it answers each RCPT TO as `answer`
 * says (changeable during the test), records every message it accepts, and offers STARTTLS with a
 * self-signed certificate (or the one given, or none).
 */
export async function startSink(t: ExecutionContext, o: { answer?: RcptAnswer; tls?: { key: string; cert: string } | false } = {}) {
  const messages: SinkMessage[] = [];
  const rcptSeen: string[] = [];
  let connections = 0;
  let answer: RcptAnswer = o.answer ?? (() => null);
  const tls = o.tls === false ? null : o.tls ?? (await certificate('mx.remote.test'));
  const server = new SMTPServer({
    authOptional: true, logger: false, banner: 'sink ready', size: 40 * 1024 * 1024, closeTimeout: 200,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    onConnect(_session, cb) { connections++; cb(); },
    onRcptTo(address, _session, cb) {
      rcptSeen.push(address.address);
      const reply = answer(address.address);
      if (reply === null) { cb(); return; }
      const err = new Error(reply.slice(4)) as Error & { responseCode: number };
      err.responseCode = Number(reply.slice(0, 3));
      cb(err);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks), secure: session.secure,
        });
        cb();
      });
    },
  });
  server.on('error', () => { /* a client that drops the connection is part of some tests */ });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return {
    port, messages, rcptSeen,
    /** Connections opened to the sink so far. */
    connections: () => connections,
    setAnswer(a: RcptAnswer) { answer = a; },
    /** Waits for the `n`th message (1-based) and returns it. */
    async nth(n: number, timeoutMs = 45_000): Promise<SinkMessage> {
      return waitFor(() => messages[n - 1], `message ${n} at the sink`, timeoutMs);
    },
  };
}
export type Sink = Awaited<ReturnType<typeof startSink>>;

/** The hosted domain with forwarders, the remote domain and its MX in every outbound test. */
export const ALIAS_DOMAIN = 'alias.test';
export const REMOTE_DOMAIN = 'remote.test';
export const REMOTE_MX = 'mx.remote.test';

/** Environment for a server that delivers to a sink on `port`, retrying after `retry` seconds. */
export const outboundEnv = (zone: MxZone, port: number, retry = '1') => ({
  MAILSTEAD_DNS_SERVERS: zone.server,
  MAILSTEAD_OUTBOUND_ALLOW_PRIVATE: 'true',
  MAILSTEAD_OUTBOUND_PORT: String(port),
  MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: retry,
});

/**
 * A server whose DNS is a test zone (REMOTE_DOMAIN's MX at 127.0.0.1, where the sink listens),
 * with a tenant that hosts ALIAS_DOMAIN (its DKIM key published) and the forwarders asked for.
 */
export async function startWorld(t: ExecutionContext, o: {
  answer?: RcptAnswer; env?: Record<string, string>; testing?: OutboundTesting; sinkTls?: { key: string; cert: string } | false;
  aliases?: Record<string, string[]>; mailboxes?: string[]; logger?: Logger;
} = {}) {
  const zone = await startMxZone(t);
  const sink = await startSink(t, { answer: o.answer, tls: o.sinkTls });
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const app: TestClient = await startTestApp(t, {
    env: { ...outboundEnv(zone, sink.port), ...o.env },
    outboundTesting: { timeoutMs: 10_000, pollMs: 100, ...o.testing }, logger: o.logger,
  });
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant });
  await app.domain(key, ALIAS_DOMAIN);
  await publishDkim(app, zone, ALIAS_DOMAIN);
  for (const local of o.mailboxes ?? []) {
    const done = await createMailbox(app, key, ALIAS_DOMAIN, `${local}@${ALIAS_DOMAIN}`, 'password-123');
    if (done.body.status !== 'completed') throw new Error(`mailbox: ${JSON.stringify(done.body)}`);
  }
  for (const [address, goto] of Object.entries(o.aliases ?? { [`fwd@${ALIAS_DOMAIN}`]: [`dest@${REMOTE_DOMAIN}`] })) {
    const done = await createAlias(app, key, ALIAS_DOMAIN, { address, goto });
    if (done.body.status !== 'completed') throw new Error(`alias: ${JSON.stringify(done.body)}`);
  }
  return { zone, sink, app, key, tenant };
}
export type World = Awaited<ReturnType<typeof startWorld>>;

/** Publishes a hosted domain's DKIM key (mailstead._domainkey) in the zone. */
export async function publishDkim(app: TestClient, zone: MxZone, hostname: string): Promise<void> {
  const row = await app.app.db.selectFrom('domains').select('dkim_public_key').where('hostname', '=', hostname).executeTakeFirstOrThrow();
  zone.txt(`mailstead._domainkey.${hostname}`, `v=DKIM1; k=rsa; p=${row.dkim_public_key}`);
}

/** The tenant's outbound items (newest first), through the API. */
export async function outboundItems(app: TestClient, key: string, query = ''): Promise<any[]> {
  const r = await app.get(`/v1/outbound?per_page=100${query}`, key);
  if (r.status !== 200) throw new Error(`GET /v1/outbound: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** Polls the outbound API until `check` accepts the items. */
export function waitForItems(app: TestClient, key: string, check: (items: any[]) => boolean, what: string, timeoutMs = 45_000): Promise<any[]> {
  return waitFor(async () => { const items = await outboundItems(app, key); return check(items) ? items : null; }, what, timeoutMs) as Promise<any[]>;
}

/** A small message from `from` to `to`, CRLF line ends. */
export function message(from: string, to: string, subject: string, extraHead = ''): string {
  return `${extraHead}From: <${from}>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}.${Date.now()}@origin.test>\r\nDate: Thu, 26 Nov 2026 04:00:00 +0000\r\n\r\nHello from ${from}.\r\n`;
}

/** A TCP server on 127.0.0.1 whose every connection `handle` scripts (remotes that misbehave). */
export async function startScripted(t: ExecutionContext, handle: (socket: Socket, n: number) => void) {
  const sockets = new Set<Socket>();
  let n = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => { /* the client gives up on us: expected */ });
    handle(socket, ++n);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }));
  return { port: (server.address() as { port: number }).port, connections: () => n };
}

/**
 * Speaks just enough SMTP line by line: `reply(line)` answers each command (null: say nothing);
 * after DATA's 354 the message bytes go to `onData`.
 */
export function scriptSmtp(socket: Socket, greeting: string | null, reply: (line: string) => string | null, onData?: (chunk: Buffer) => void): void {
  if (greeting !== null) socket.write(greeting);
  let buffer = '';
  let inData = false;
  socket.on('data', (chunk: Buffer) => {
    if (inData) { onData?.(chunk); return; }
    buffer += chunk.toString('latin1');
    let i: number;
    while (!inData && (i = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const answer = reply(line);
      if (answer !== null) socket.write(answer);
      if (/^DATA$/i.test(line) && answer?.startsWith('354')) inData = true;
    }
  });
}
