import test from 'ava';
import { createAlias } from '../helpers/mailboxes.js';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { waitForEmails } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, publishDkim, startWorld, waitForItems } from './world.js';

test('mail failing DMARC under p=reject is refused before the 250 (section 18): no local copy, no forward, no DSN', async (t) => {
  const { app, key, sink, zone } = await startWorld(t, { mailboxes: ['keep'], aliases: { [`team@${ALIAS_DOMAIN}`]: [`keep@${ALIAS_DOMAIN}`, `dest@${REMOTE_DOMAIN}`] } });
  zone.txt('_dmarc.strict.test', 'v=DMARC1; p=reject');
  const refused = await sendMail(app.smtpPort, { from: 'ann@strict.test', to: [`team@${ALIAS_DOMAIN}`] }, message('ann@strict.test', `team@${ALIAS_DOMAIN}`, 'spoofed'))
    .then(() => null, (err: { responseCode?: number; response?: string }) => err);
  t.is(refused?.responseCode, 550);
  t.regex(refused?.response ?? '', /DMARC/);
  // A message that did get in afterwards is stored and is the only one: the refused one left nothing.
  await sendMail(app.smtpPort, { from: 'ann@plain.test', to: [`keep@${ALIAS_DOMAIN}`] }, message('ann@plain.test', `keep@${ALIAS_DOMAIN}`, 'after'));
  const [copy] = await waitForEmails(app, key, 1);
  t.is(copy.subject, 'after');
  t.is((await app.get('/v1/outbound?per_page=100', key)).body.data.length, 0);
  t.is(sink.messages.length, 0);
});

test('a forwarder loop between two hosted aliases stops after 30 Received: headers with a 5.4.6 DSN that finds its way home', async (t) => {
  const { app, key, sink, zone } = await startWorld(t, { aliases: { [`loop-a@${ALIAS_DOMAIN}`]: ['loop-b@other.test'] } });
  const otherKey = await app.keyFor();
  await app.domain(otherKey, 'other.test');
  await publishDkim(app, zone, 'other.test');
  const done = await createAlias(app, otherKey, 'other.test', { address: 'loop-b@other.test', goto: [`loop-a@${ALIAS_DOMAIN}`] });
  t.is(done.body.status, 'completed');
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`loop-a@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `loop-a@${ALIAS_DOMAIN}`, 'round and round'));
  // About 33 hops through ingest: generous on a loaded machine.
  const dsn = await sink.nth(1, 150_000);
  t.is(dsn.from, '');
  t.deepEqual(dsn.to, [`ann@${REMOTE_DOMAIN}`]);
  t.regex(dsn.raw.toString('latin1'), /^Status: 5\.4\.6/m);
  const failed = await waitFor(async () => {
    const all = [...(await app.get('/v1/outbound?per_page=100', key)).body.data, ...(await app.get('/v1/outbound?per_page=100', otherKey)).body.data];
    return all.find((i) => i.kind === 'forward' && i.status === 'failed') ?? null;
  }, 'the looping forward refused');
  t.regex(failed.last_response, /^554 5\.4\.6/);
  t.is(failed.attempts, 0);
  const forwards = await app.app.db.selectFrom('outbound').select('id').where('kind', '=', 'forward').execute();
  t.true(forwards.length >= 29 && forwards.length <= 40, `${forwards.length} forwards`);
});
