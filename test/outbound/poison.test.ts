import test from 'ava';
import { createAlias } from '../helpers/mailboxes.js';
import { startTestApp } from '../helpers/app.js';
import { capturedLogger } from '../helpers/logs.js';
import { setAsideOperator } from '../helpers/set-aside.js';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { startMxZone } from './mx-zone.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, message, outboundEnv, startScripted, startWorld, waitForItems } from './world.js';

const SENDER = `ann@${REMOTE_DOMAIN}`;
test('an item whose stored data is bad is tried alone and set aside; the other recipients of its message are delivered at once; the operator retries and discards it', async (t) => {
  const rcpts = ['a', 'b', 'c'].map((l) => `${l}@${REMOTE_DOMAIN}`);
  const logs = capturedLogger('info');
  // The remote defers everything at first, so the three items of the one message wait in the queue together.
  const { app, key, sink } = await startWorld(t, { aliases: { [`fwd@${ALIAS_DOMAIN}`]: rcpts }, answer: () => '451 4.3.0 not now', logger: logs.logger });
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'one bad copy'));
  const waiting = await waitForItems(app, key, (items) => items.length === 3 && items.every((i) => i.status === 'queued' && i.attempts >= 1), 'three items deferred');
  // Bad data in the row that leads its group (the lowest id: a group's message is readied from it).
  const bad = Math.min(...waiting.map((i) => i.id));
  const badRcpt = waiting.find((i) => i.id === bad).rcpt_to as string;
  await app.app.db.updateTable('outbound').set({ auth: '{"dmarc":{"result":' }).where('id', '=', bad).execute();
  sink.setAnswer(() => null);

  await waitFor(() => {
    const got = sink.messages.filter((m) => m.from !== '').flatMap((m) => m.to);
    return rcpts.filter((r) => r !== badRcpt).every((r) => got.includes(r));
  }, 'the two good copies at the sink', 45_000);
  const items = await waitForItems(app, key, (list) => list.find((i) => i.id === bad)?.status === 'failed', 'the bad item set aside');
  const failed = items.find((i) => i.id === bad);
  t.regex(failed.last_response, /^554 5\.3\.0 set aside after 3 local errors: .*JSON/);
  t.is(failed.next_attempt_at, null);
  t.deepEqual(items.filter((i) => i.kind === 'forward' && i.id !== bad).map((i) => i.status), ['sent', 'sent']);
  t.false(sink.messages.some((m) => m.from !== '' && m.to.includes(badRcpt)), 'the bad copy was never sent');
  // Its sender hears of it (a DSN with the null sender), and the metrics count it.
  const dsn = await waitFor(() => sink.messages.find((m) => m.from === '' && m.to.includes(SENDER)), 'the DSN', 45_000);
  t.regex(dsn!.raw.toString('latin1'), /Status: 5\.3\.0/);
  const op = await setAsideOperator(app, 'outbound', 'mailstead_outbound_set_aside');
  t.is(await op.gauge(), 1);

  // The operator sees it: a log line with the reason, and the admin list (not the tenants').
  const line = logs.records().find((l) => /set aside as failed$/.test(l.msg ?? ''))!;
  t.deepEqual(line.items, [bad]);
  t.regex(line.err.message, /JSON/);
  t.is((await app.get(op.path, key)).status, 403);
  const [listed] = await op.list();
  t.like(listed, { id: bad, kind: 'forward', rcpt_to: badRcpt, attempts: failed.attempts });
  t.regex(listed.reason, /^554 5\.3\.0 set aside/);
  // A retry through the API gives it the worker's tries again; its data still bad, it is set aside again.
  t.is((await app.post(`${op.path}/${bad}/retry`, op.admin)).status, 200);
  await waitForItems(app, key, (list) => {
    const i = list.find((x) => x.id === bad);
    return i?.status === 'failed' && i.attempts > failed.attempts;
  }, 'the retried item set aside again');
  t.false(sink.messages.some((m) => m.from !== '' && m.to.includes(badRcpt)), 'still never sent');
  t.is(sink.messages.filter((m) => m.from === '' && m.to.includes(SENDER)).length, 1, 'no second DSN');
  // A discard from the CLI deletes it.
  const cliList = await op.cli('list');
  t.is(cliList.code, 0, cliList.stderr);
  t.deepEqual(JSON.parse(cliList.stdout).map((i: any) => i.id), [bad]);
  const discarded = await op.cli('discard', String(bad));
  t.is(discarded.code, 0, discarded.stderr);
  t.is(discarded.stdout, 'discarded\n');
  t.is((await app.get(`/v1/outbound/${bad}`, key)).status, 404);
  t.deepEqual(await op.list(), []);
  t.is(await op.gauge(), 0);
});

test('a remote whose reply carries NUL bytes gets the message once: the reply is stored as U+FFFD', async (t) => {
  let delivered = 0;
  const remote = await startScripted(t, (s) => {
    let buf = '';
    let inData = false;
    s.write('220 hostile ready\r\n');
    s.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buf = buf.slice(end + 5);
          inData = false;
          delivered++;
          s.write('250 2.0.0 queued\u0000as\u0000hostile\r\n');
          continue;
        }
        const i = buf.indexOf('\r\n');
        if (i < 0) return;
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (/^EHLO/i.test(line)) s.write('250-hostile\r\n250 8BITMIME\r\n');
        else if (/^DATA/i.test(line)) { inData = true; s.write('354 go on\r\n'); }
        else if (/^QUIT/i.test(line)) { s.end('221 bye\r\n'); return; }
        else s.write('250 ok\r\n');
      }
    });
  });
  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const app = await startTestApp(t, { env: outboundEnv(zone, remote.port, '1'), outboundTesting: { timeoutMs: 10_000, pollMs: 100 } });
  const key = await app.keyFor();
  await app.domain(key, ALIAS_DOMAIN);
  await createAlias(app, key, ALIAS_DOMAIN, { address: `fwd@${ALIAS_DOMAIN}`, goto: [`dest@${REMOTE_DOMAIN}`] });
  await sendMail(app.smtpPort, { from: SENDER, to: [`fwd@${ALIAS_DOMAIN}`] }, message(SENDER, `fwd@${ALIAS_DOMAIN}`, 'hostile reply'));
  const [item] = await waitForItems(app, key, (items) => items[0]?.status === 'sent', 'the item recorded as sent');
  t.is(item.last_response, '250 2.0.0 queued\ufffdas\ufffdhostile');
  t.is(item.attempts, 1);
  t.is(delivered, 1);
});
