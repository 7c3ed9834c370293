import test from 'ava';
import { createHostLookup } from '../../src/webhooks/resolve.js';
import { createSender } from '../../src/webhooks/sender.js';
import { startReceiver } from '../helpers/webhooks.js';

// The sender against real sockets, with a short whole-attempt timeout so the test need not wait 15 s.
test('an attempt that gets no answer is cut off at the timeout, and one under way at shutdown comes back as aborted', async (t) => {
  const receiver = await startReceiver(t, { fallback: { hang: true } });
  const sender = createSender({ lookup: createHostLookup([]), allowPrivate: true, timeoutMs: 400, connectionsPerOrigin: 4 });
  t.teardown(() => sender.close());
  const started = Date.now();
  const timedOut = await sender.post(receiver.url, { 'content-type': 'application/json' }, '{}');
  t.is(timedOut.statusCode, null);
  t.false(timedOut.aborted);
  t.is(timedOut.error, 'Timed out after 0.4 s');
  t.true(Date.now() - started >= 380);
  t.true(timedOut.latencyMs >= 380);

  const pending = sender.post(receiver.url, { 'content-type': 'application/json' }, '{}');
  await receiver.waitForCount(2);
  sender.abortAll();
  const cut = await pending;
  t.true(cut.aborted);
  t.is(cut.statusCode, null);
});

test('without private targets allowed, a loopback literal is refused before any connection', async (t) => {
  const receiver = await startReceiver(t);
  const sender = createSender({ lookup: createHostLookup([]), allowPrivate: false, connectionsPerOrigin: 4 });
  t.teardown(() => sender.close());
  const r = await sender.post(receiver.url, {}, '{}');
  t.is(r.statusCode, null);
  t.is(r.error, 'Refused by the SSRF guard: 127.0.0.1 is a loopback address (MAILSTEAD_WEBHOOK_ALLOW_PRIVATE=true allows http and private addresses, for development)');
  t.is(receiver.requests.length, 0);
});
