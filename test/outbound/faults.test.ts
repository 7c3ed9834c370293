import test from 'ava';
import { connect } from 'node:net';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { startMxZone } from './mx-zone.js';
import { startTestApp } from '../helpers/app.js';
import { createAlias } from '../helpers/mailboxes.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, message, outboundEnv, scriptSmtp, startScripted, startSink, waitForItems } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;

/** A server delivering to `port` (the remote's MX at 127.0.0.1), with fwd@ forwarding to `goto`. */
async function worldAt(t: any, port: number, o: { env?: Record<string, string>; goto?: string[]; timeoutMs?: number } = {}) {
  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const app = await startTestApp(t, { env: { ...outboundEnv(zone, port, '1'), ...o.env }, outboundTesting: { timeoutMs: o.timeoutMs ?? 1_000, pollMs: 100 } });
  const key = await app.keyFor();
  await app.domain(key, ALIAS_DOMAIN);
  await createAlias(app, key, ALIAS_DOMAIN, { address: `fwd@${ALIAS_DOMAIN}`, goto: o.goto ?? [`dest@${REMOTE_DOMAIN}`] });
  const send = (subject: string) => sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, subject));
  return { zone, app, key, send };
}

/** Waits for the only forward item to have been tried `n` times and checks it is still queued. */
async function triedAndQueued(t: any, w: Awaited<ReturnType<typeof worldAt>>, n: number, pattern: RegExp) {
  const [item] = await waitForItems(w.app, w.key, (items) => items.find((i) => i.kind === 'forward')?.attempts >= n, `${n} tries`);
  t.is(item.status, 'queued');
  t.regex(item.last_response, pattern);
  t.truthy(item.next_attempt_at);
}

test('a remote that never answers times out and is retried', async (t) => {
  const remote = await startScripted(t, () => { /* silence */ });
  const w = await worldAt(t, remote.port);
  await w.send('silence');
  await triedAndQueued(t, w, 2, /timeout|timed out|ETIMEDOUT/i);
  t.true(remote.connections() >= 2);
});

test('a remote that answers garbage is retried', async (t) => {
  const remote = await startScripted(t, (s) => scriptSmtp(s, 'hello? this is not smtp\r\n', () => 'what\r\n'));
  const w = await worldAt(t, remote.port);
  await w.send('garbage');
  await triedAndQueued(t, w, 2, /not smtp/);
});

test('a connection dropped in the middle of DATA is retried, and the next try delivers', async (t) => {
  const sink = await startSink(t, { tls: false });
  const remote = await startScripted(t, (s, n) => {
    if (n > 1) { const up = connect(sink.port, '127.0.0.1'); s.pipe(up).pipe(s); up.on('error', () => s.destroy()); return; }
    scriptSmtp(s, '220 flaky ready\r\n', (line) => {
      if (/^EHLO/i.test(line)) return '250-flaky\r\n250 8BITMIME\r\n';
      if (/^(MAIL|RCPT)/i.test(line)) return '250 ok\r\n';
      if (/^DATA/i.test(line)) return '354 go on\r\n';
      return '250 ok\r\n';
    }, () => s.destroy());
  });
  const w = await worldAt(t, remote.port, { timeoutMs: 10_000 });
  await w.send('dropped');
  const m = await sink.nth(1);
  t.deepEqual(m.to, [`dest@${REMOTE_DOMAIN}`]);
  const [item] = await waitForItems(w.app, w.key, (items) => items[0]?.status === 'sent', 'sent on the second try');
  t.is(item.attempts, 2);
});

test('a broken STARTTLS handshake falls back to plaintext at once', async (t) => {
  const sink = await startSink(t, { tls: false });
  const remote = await startScripted(t, (s) => {
    // Offers STARTTLS, then answers the handshake with garbage; without STARTTLS it is the sink. The
    // socket stays open long enough for a loaded client to see the garbage as a TLS failure rather
    // than as a dropped connection (which would be a retry, not the fallback under test).
    const up = connect(sink.port, '127.0.0.1');
    up.on('error', () => s.destroy());
    let first = true;
    up.on('data', (d: Buffer) => {
      let text = d.toString('latin1');
      if (first && /^250[ -]/m.test(text)) { text = text.replace(/^250 /m, '250-STARTTLS\r\n250 '); first = false; }
      s.write(text);
    });
    s.on('data', (d: Buffer) => {
      if (/^STARTTLS\r\n/i.test(d.toString('latin1'))) { s.write('220 2.0.0 go ahead\r\n'); s.write('this is not a TLS handshake\r\n'); setTimeout(() => s.destroy(), 5_000); up.destroy(); return; }
      up.write(d);
    });
  });
  const w = await worldAt(t, remote.port, { timeoutMs: 10_000 });
  await w.send('broken tls');
  const m = await sink.nth(1).catch(async (err) => { t.log(JSON.stringify(await waitForItems(w.app, w.key, () => true, 'items'))); throw err; });
  t.false(m.secure);
  const [item] = await waitForItems(w.app, w.key, (items) => items[0]?.status === 'sent', 'sent');
  t.is(item.attempts, 1);
});

test('MX hosts on loopback are refused for good without MAILSTEAD_OUTBOUND_ALLOW_PRIVATE, and the DSN to a loopback MX is refused too', async (t) => {
  const sink = await startSink(t);
  const w = await worldAt(t, sink.port, { env: { MAILSTEAD_OUTBOUND_ALLOW_PRIVATE: 'false' } });
  await w.send('to loopback');
  const items = await waitForItems(w.app, w.key, (all) => all.length === 2 && all.every((i) => i.status === 'failed'), 'forward and DSN failed');
  const forward = items.find((i) => i.kind === 'forward');
  const dsn = items.find((i) => i.kind === 'dsn');
  t.regex(forward.last_response, /^550 5\.4\.4 .*MAILSTEAD_OUTBOUND_ALLOW_PRIVATE=true allows them/);
  t.is(dsn.rcpt_to, SENDER);
  t.regex(dsn.last_response, /^550 5\.4\.4/);
  t.is(sink.messages.length, 0);
});

test('a domain without MX and address, and a null MX, fail for good', async (t) => {
  const sink = await startSink(t);
  const w = await worldAt(t, sink.port, { goto: ['x@nowhere.test', 'y@nullmx.test'] });
  w.zone.mx('nullmx.test', '.', 0);
  await w.send('nowhere');
  const items = await waitForItems(w.app, w.key, (all) => all.filter((i) => i.kind === 'forward' && i.status === 'failed').length === 2, 'both failed');
  const by = new Map(items.filter((i) => i.kind === 'forward').map((i) => [i.rcpt_to, i]));
  t.regex(by.get('x@nowhere.test').last_response, /5\.1\.2/);
  t.regex(by.get('y@nullmx.test').last_response, /5\.1\.10/);
  // The sender (at the sink's domain) hears of both.
  await waitFor(() => sink.messages.length >= 2, 'two DSNs');
  t.true(sink.messages.every((m) => m.from === '' && m.to[0] === SENDER));
});
