import test, { type ExecutionContext } from 'ava';
import { connect } from 'node:net';
import { sendMail } from '../helpers/smtp.js';
import { startMxZone } from './mx-zone.js';
import { startTestApp } from '../helpers/app.js';
import { createAlias } from '../helpers/mailboxes.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, message, outboundEnv, startScripted, startSink, waitForItems, type RcptAnswer } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;
const commandCount = (text: string, command: string) => text.split('\r\n').filter((l) => l.toUpperCase().startsWith(command)).length;

/**
 * A sink (smtp-server) behind a proxy that records what our client sends on each connection;
 * `drop(n, text)` may cut connection n before a chunk is passed on (a remote that went away).
 */
async function proxiedWorld(t: ExecutionContext, o: { answer?: RcptAnswer; drop?: (n: number, sent: string) => boolean } = {}) {
  const sink = await startSink(t, { tls: false, answer: o.answer });
  const sent: string[] = [];
  const proxy = await startScripted(t, (s, n) => {
    sent[n - 1] = '';
    const up = connect(sink.port, '127.0.0.1');
    up.on('error', () => s.destroy());
    up.pipe(s);
    s.on('data', (chunk: Buffer) => {
      const before = sent[n - 1];
      sent[n - 1] += chunk.toString('latin1');
      if (o.drop?.(n, sent[n - 1])) { sent[n - 1] = before; s.destroy(); up.destroy(); return; }
      up.write(chunk);
    });
  });
  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const app = await startTestApp(t, { env: outboundEnv(zone, proxy.port, '1'), outboundTesting: { timeoutMs: 10_000, pollMs: 100, idleMs: 60_000 } });
  const key = await app.keyFor();
  await app.domain(key, ALIAS_DOMAIN);
  await createAlias(app, key, ALIAS_DOMAIN, { address: `fwd@${ALIAS_DOMAIN}`, goto: [`dest@${REMOTE_DOMAIN}`] });
  const send = (subject: string) => sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, subject));
  return { sink, proxy, sent, app, key, send };
}

test('a reused session goes straight to MAIL after a delivered message, and sends RSET first after a refused one', async (t) => {
  let refuse = false;
  const w = await proxiedWorld(t, { answer: (rcpt) => (refuse && rcpt === `dest@${REMOTE_DOMAIN}` ? '550 5.1.1 no such user' : null) });
  for (const [n, subject] of [[1, 'first'], [2, 'second'], [3, 'third']] as const) {
    await w.send(subject);
    await w.sink.nth(n);
  }
  t.is(w.proxy.connections(), 1);
  t.is(commandCount(w.sent[0], 'MAIL FROM:'), 3);
  t.is(commandCount(w.sent[0], 'RSET'), 0, 'no RSET between transactions that ended with the reply to the message');
  // The fourth is refused at RCPT: the open transaction is reset before the DSN to the sender goes over the same session.
  refuse = true;
  await w.send('refused');
  const dsn = await w.sink.nth(4);
  t.deepEqual(dsn.to, [SENDER]);
  t.is(dsn.from, '');
  t.is(w.proxy.connections(), 1);
  t.is(commandCount(w.sent[0], 'RSET'), 1);
  const items = await waitForItems(w.app, w.key, (all) => all.length === 5 && all.every((i) => i.status !== 'queued'), 'four forwards and a DSN done');
  t.is(items.filter((i) => i.status === 'sent').length, 4);
});

test('a reused session that the remote closed meanwhile is replaced at once: the message goes over a new session in the same try', async (t) => {
  // The first connection is cut when the second transaction's MAIL FROM reaches the proxy.
  const w = await proxiedWorld(t, { drop: (n, sent) => n === 1 && commandCount(sent, 'MAIL FROM:') >= 2 });
  await w.send('first');
  await w.sink.nth(1);
  await w.send('second');
  const second = await w.sink.nth(2);
  t.regex(second.raw.toString('latin1'), /Subject: second/);
  t.is(w.proxy.connections(), 2);
  const items = await waitForItems(w.app, w.key, (all) => all.length === 2 && all.every((i) => i.status === 'sent'), 'both sent');
  t.true(items.every((i) => i.attempts === 1), 'no retry later: the new session carried the message in the same try');
});
