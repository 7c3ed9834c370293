import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import dns2 from 'dns2';
import type { EmailEvent, EventType } from '../../src/webhooks/events.js';
import type { TestClient } from './app.js';
import { poll } from './poll.js';

/** One request a test receiver got: the raw bytes exactly as sent, and the parsed JSON. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

/** How a test receiver answers one request; `hang` never answers (until the receiver closes). */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  hang?: boolean;
}

/** Polls `check` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  return poll(what, check, { timeoutMs, everyMs: 20, done: (v) => Boolean(v) });
}

/**
 * A real HTTP receiver on 127.0.0.1 (port 0) that records every request with its raw body.
 * Answers come from `script` in order, then `fallback` (200 by default). Closed after the test.
 */
export async function startReceiver(t: ExecutionContext, o: { script?: Answer[]; fallback?: Answer } = {}) {
  const requests: Received[] = [];
  const script = [...(o.script ?? [])];
  let fallback: Answer = o.fallback ?? { status: 200 };
  const hanging = new Set<ServerResponse>();
  let open = 0;
  let maxOpen = 0;
  const server = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    res.on('close', () => { open--; });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown = null;
      try { body = JSON.parse(raw.toString('utf8')); } catch { /* kept raw */ }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body });
      const a = script.shift() ?? fallback;
      if (a.hang) { hanging.add(res); return; }
      res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
      res.end(a.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () => new Promise<void>((resolve) => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    server.close(() => resolve());
  });
  t.teardown(close);
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    /** Queues answers for the next requests. */
    answer: (...next: Answer[]) => { script.push(...next); },
    /** Changes the answer once the script is used up. */
    setFallback: (a: Answer) => { fallback = a; },
    /** The most requests that were open at the same time. */
    maxConcurrent: () => maxOpen,
    /** Resolves once at least `n` requests arrived. */
    waitForCount: (n: number, timeoutMs = 10_000) => waitFor(() => requests.length >= n, `${n} webhook request(s)`, timeoutMs).then(() => requests),
    close,
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The independent check of X-Webhook-Signature: lowercase hex HMAC-SHA256 with the secret over
 * `<X-Webhook-Timestamp>.<raw body>`, computed here with node:crypto from the bytes received and
 * compared in constant time with each space-separated entry. Returns which entries matched.
 */
export function hexSignatureMatches(secret: string, r: Received): boolean[] {
  const ts = String(r.headers['x-webhook-timestamp']);
  const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${ts}.`), r.raw])).digest();
  return String(r.headers['x-webhook-signature'] ?? '').split(' ').map((entry) => {
    if (!/^[0-9a-f]{64}$/.test(entry)) return false;
    return timingSafeEqual(Buffer.from(entry, 'hex'), expected);
  });
}

/** The tenant id behind a key. */
export async function tenantOf(app: TestClient, key: string): Promise<number> {
  const k = await app.app.tenants.authenticate(key);
  if (!k) throw new Error('unknown key');
  return k.tenantId;
}

/** Records events through the webhooks' event recorder inside a transaction, as the emails capability does. */
export async function recordEvents(app: TestClient, tenantId: number, events: Array<{ type: EventType; emailId: number; mailboxId: number }>) {
  const list: EmailEvent[] = events.map((e) => ({ tenantId, ...e }));
  return app.app.db.transaction().execute((trx) => app.app.webhooks.events.record(trx, list));
}

/** The app environment that lets a webhook point at a receiver on 127.0.0.1. */
export const PRIVATE_HOOKS = { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' };

/**
 * A receiver and an active webhook of the key's tenant subscribed to every event (the app started
 * with PRIVATE_HOOKS): events are recorded only for tenants that have one.
 */
export async function subscribeAll(t: ExecutionContext, app: TestClient, key: string): Promise<Receiver> {
  const receiver = await startReceiver(t);
  await createWebhook(app, key, { url: receiver.url, events: ['email.received', 'email.read', 'email.deleted'] });
  return receiver;
}

/** Registers a webhook and returns its id and secret (fails the test on any other answer). */
export async function createWebhook(app: TestClient, key: string, body: Record<string, unknown>): Promise<{ id: number; secret: string }> {
  const r = await app.post('/v1/webhooks', key, body);
  if (r.status !== 200) throw new Error(`create webhook: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/**
 * Waits until the delivery queue is idle: no delivery of any tenant is queued or being sent (the
 * fan-out writes its rows in the recording transaction, so what is not a row is never sent, and a
 * request reaches its receiver before its row leaves `sending`). Returns every delivery row.
 */
export async function deliveriesSettled(app: TestClient, timeoutMs = 30_000) {
  const rows = await waitFor(async () => {
    const all = await app.app.db.selectFrom('webhook_deliveries').select(['webhook_id', 'status', 'attempts']).execute();
    return all.every((r) => r.status !== 'queued' && r.status !== 'sending') ? all : null;
  }, 'every webhook delivery settled', timeoutMs);
  return rows!;
}

/** The deliveries list of a webhook (the body's data). */
export async function deliveriesOf(app: TestClient, key: string, webhookId: number): Promise<any[]> {
  const r = await app.get(`/v1/webhooks/${webhookId}/deliveries`, key);
  if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/**
 * A tiny authoritative DNS server (dns2) on 127.0.0.1 that answers A queries with whatever
 * `answerFor(name)` says at the moment of the query (null: no answer). Closed after the test.
 */
export async function startDnsServer(t: ExecutionContext, answerFor: (name: string) => string | null) {
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = dns2.Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const address = question && question.type === dns2.Packet.TYPE.A ? answerFor(question.name) : null;
      if (address) response.answers.push(dns2.Packet.createResourceFromQuestion(question, { type: dns2.Packet.TYPE.A, class: dns2.Packet.CLASS.IN, ttl: 1, address }));
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  t.teardown(() => server.close());
  return { port: addresses.udp!.port, server: `127.0.0.1:${addresses.udp!.port}` };
}
