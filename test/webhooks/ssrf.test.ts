import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { createWebhook, deliveriesOf, recordEvents, startDnsServer, startReceiver, tenantOf, waitFor } from '../helpers/webhooks.js';

/** A bare TCP listener on 127.0.0.1 that only counts the connections it gets. */
async function countingListener(t: import('ava').ExecutionContext) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((s) => { connections++; sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()); }));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

test('a DNS name that resolves to 127.0.0.1 is refused at delivery time when private targets are not allowed', async (t) => {
  const answers: Record<string, string> = { 'hook.example.test': '93.184.215.14', 'evil.example.test': '127.0.0.1' };
  const dns = await startDnsServer(t, (name) => answers[name] ?? null);
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: dns.server } });
  const target = await countingListener(t);
  const key = await app.keyFor();

  // At registration the name is judged by what it resolves to.
  const refused = await app.post('/v1/webhooks', key, { url: `https://evil.example.test:${target.port}/hook`, events: ['email.received'] });
  t.is(refused.status, 422);
  t.regex(refused.body.reason, /evil\.example\.test resolves to 127\.0\.0\.1, a loopback address/);
  const unknown = await app.post('/v1/webhooks', key, { url: 'https://nowhere.example.test/hook', events: ['email.received'] });
  t.is(unknown.status, 422);
  t.is(unknown.body.reason, 'url host nowhere.example.test could not be resolved');

  // A public answer passes registration; then the name is rebound to loopback before delivery.
  const hook = await createWebhook(app, key, { url: `https://hook.example.test:${target.port}/hook`, events: ['email.received'] });
  answers['hook.example.test'] = '127.0.0.1';
  await recordEvents(app, await tenantOf(app, key), [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  const d = await waitFor(async () => {
    const [x] = await deliveriesOf(app, key, hook.id);
    return x && x.attempts === 1 && x.status !== 'sending' ? x : null;
  }, 'the refused attempt');
  t.is(d.status, 'queued');
  t.is(d.recent_attempts[0].status_code, null);
  t.regex(d.recent_attempts[0].error, /^Refused by the SSRF guard: hook\.example\.test resolves to 127\.0\.0\.1, a loopback address \(MAILSTEAD_WEBHOOK_ALLOW_PRIVATE=true allows http and private addresses, for development\)$/);
  t.is(target.connections(), 0);
});

test('with private targets allowed the same name-based delivery goes through the configured DNS server', async (t) => {
  const dns = await startDnsServer(t, (name) => (name === 'hook.example.test' ? '127.0.0.1' : null));
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: dns.server, MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = await startReceiver(t);
  const key = await app.keyFor();
  await createWebhook(app, key, { url: `http://hook.example.test:${receiver.port}/hook`, events: ['email.read'] });
  await recordEvents(app, await tenantOf(app, key), [{ type: 'email.read', emailId: 2, mailboxId: 1 }]);
  const [r] = await receiver.waitForCount(1);
  t.is(r.headers.host, `hook.example.test:${receiver.port}`);
  t.is(r.body.data.email_id, 2);
});

test('a redirect is not followed and counts as a failed attempt', async (t) => {
  const app = await startTestApp(t, { env: { MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const elsewhere = await startReceiver(t);
  const receiver = await startReceiver(t, { fallback: { status: 302, headers: { location: elsewhere.url } } });
  const key = await app.keyFor();
  const hook = await createWebhook(app, key, { url: receiver.url, events: ['email.received'] });
  await recordEvents(app, await tenantOf(app, key), [{ type: 'email.received', emailId: 1, mailboxId: 1 }]);
  await receiver.waitForCount(1);
  const d = await waitFor(async () => {
    const [x] = await deliveriesOf(app, key, hook.id);
    return x && x.attempts === 1 && x.status !== 'sending' ? x : null;
  }, 'the redirected attempt');
  t.is(d.status, 'queued');
  t.is(d.recent_attempts[0].status_code, 302);
  // The attempt is recorded, so it is over: a followed redirect would have reached elsewhere within it.
  t.is(elsewhere.requests.length, 0);
});
