import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { waitFor } from '../helpers/webhooks.js';
import { lineSession, PASSWORD, plainToken, rawMessage, submissionApp, submit, transport } from './world.js';

test('1,000 recipients: the first 100 are taken, the rest get 452 4.5.3, and the message goes to the 100', async (t) => {
  const { app, box } = await submissionApp(t);
  const to = Array.from({ length: 1000 }, (_, i) => `r${i}@elsewhere.test`);
  const r = await submit(app, 'implicit', box.address, { from: box.address, to }, rawMessage({ from: box.address, to: to[0], subject: 'many' }));
  t.true(r.ok, JSON.stringify(r).slice(0, 500));
  if (!r.ok) return;
  t.is(r.info.accepted.length, 100);
  t.is(r.info.rejected.length, 900);
  const errors = (r.info as unknown as { rejectedErrors: Array<{ response: string }> }).rejectedErrors;
  t.regex(errors[0].response, /^452 4\.5\.3 /);
  // The items are queued as the message's journal record is stored, soon after the 250.
  const count = async () => Number((await app.app.db.selectFrom('outbound').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'submission').executeTakeFirstOrThrow()).n);
  await waitFor(async () => (await count()) > 0, 'the items queued', 30_000);
  t.is(await count(), 100);
});

test('the daily limit counts recipients per mailbox over a rolling 24 hours: 450 4.7.1 past it, free again a day later', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const { app, box } = await submissionApp(t, { clock, env: { MAILSTEAD_SUBMISSION_DAILY_LIMIT: '5' } });
  const send = (to: string[]) => submit(app, 'implicit', box.address, { from: box.address, to }, rawMessage({ from: box.address, to: to[0], subject: 'daily' }));
  const first = await send(['a@elsewhere.test', 'b@elsewhere.test', 'c@elsewhere.test']);
  t.true(first.ok);
  clock.advance(12 * 3_600_000);
  const second = await send(['d@elsewhere.test', 'e@elsewhere.test', 'f@elsewhere.test']);
  t.true(second.ok, 'two of three are taken');
  if (second.ok) {
    t.deepEqual(second.info.accepted, ['d@elsewhere.test', 'e@elsewhere.test']);
    const errors = (second.info as unknown as { rejectedErrors: Array<{ response: string }> }).rejectedErrors;
    t.regex(errors[0].response, /^450 4\.7\.1 /);
  }
  const third = await send(['g@elsewhere.test']);
  t.false(third.ok, 'nothing left today');
  if (!third.ok) t.regex(third.err.response ?? '', /^450 4\.7\.1 /);
  // The first three leave the window 24 hours after they were sent.
  clock.advance(12 * 3_600_000 + 1_000);
  const later = await send(['h@elsewhere.test', 'i@elsewhere.test', 'j@elsewhere.test']);
  t.true(later.ok);
  if (later.ok) t.is(later.info.accepted.length, 3);
  const api = await app.post('/v1/mail/send', box.key, { from: box.address, to: ['k@elsewhere.test'], subject: 'over', text: 'x' });
  t.is(api.status, 429, JSON.stringify(api.body));
  t.is(api.body.status, 'error');
});

test('a message over SIZE is refused with 552 and nothing is sent', async (t) => {
  const { app, box } = await submissionApp(t);
  const s = await lineSession(t, app.submissionsPort, true);
  t.regex(await s.cmd('EHLO client.test'), /SIZE 26214400/);
  t.regex(await s.cmd(`AUTH PLAIN ${plainToken(box.address, PASSWORD)}`), /^235 /);
  t.regex(await s.cmd(`MAIL FROM:<${box.address}> SIZE=30000000`), /^552 /, 'declared size over the limit');
  const tr = transport(app, 'starttls', box.address);
  const line = 'x'.repeat(998) + '\r\n';
  const body = line.repeat(Math.ceil((26 * 1024 * 1024) / line.length));
  const err = await t.throwsAsync(tr.sendMail({ envelope: { from: box.address, to: ['big@elsewhere.test'] }, raw: rawMessage({ from: box.address, to: 'big@elsewhere.test', subject: 'big', body }) })) as Error & { responseCode?: number; response?: string };
  tr.close();
  t.is(err.responseCode, 552);
  t.regex(err.response ?? '', /^552 5\.3\.4 /);
  const queued = await app.app.db.selectFrom('outbound').select('id').execute();
  t.is(queued.length, 0);
});

test('a sender whose mailbox has no room for the Sent copy is refused (552 5.2.2, API 422) and nothing leaves', async (t) => {
  const { app, box } = await submissionApp(t);
  // Quotas are set by the operator; here the row is filled up directly.
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1, used_bytes: 1024 * 1024 }).where('id', '=', box.mailboxId).execute();
  const r = await submit(app, 'implicit', box.address, { from: box.address, to: ['x@elsewhere.test'] }, rawMessage({ from: box.address, to: 'x@elsewhere.test', subject: 'full' }));
  t.false(r.ok);
  if (!r.ok) t.regex(r.err.response ?? '', /^552 5\.2\.2 /);
  const api = await app.post('/v1/mail/send', box.key, { from: box.address, to: ['x@elsewhere.test'], subject: 'full', text: 'x' });
  t.is(api.status, 422);
  t.regex(api.body.reason, /quota/);
  t.is((await app.app.db.selectFrom('outbound').select('id').execute()).length, 0);
});

test('concurrent sends of one mailbox never pass the daily limit together: the count is reserved at once, the rest get 429 or 450', async (t) => {
  const { app, box } = await submissionApp(t, { env: { MAILSTEAD_SUBMISSION_DAILY_LIMIT: '5' } });
  const api = Array.from({ length: 4 }, (_, i) => app.post('/v1/mail/send', box.key, { from: box.address, to: [`a${i}@elsewhere.test`, `b${i}@elsewhere.test`], subject: `race ${i}`, text: 'x' }));
  const smtp = Array.from({ length: 2 }, (_, i) => submit(app, 'implicit', box.address, { from: box.address, to: [`c${i}@elsewhere.test`, `d${i}@elsewhere.test`] }, rawMessage({ from: box.address, to: `c${i}@elsewhere.test`, subject: `race smtp ${i}` })));
  const [answers, sent] = await Promise.all([Promise.all(api), Promise.all(smtp)]);
  for (const a of answers) t.true(a.status === 200 || a.status === 429, JSON.stringify(a.body));
  for (const s of sent) if (!s.ok) t.regex(s.err.response ?? '', /^450 4\.7\.1 /);
  const accepted = answers.filter((a) => a.status === 200).length + sent.filter((s) => s.ok && s.info.accepted.length === 2).length;
  const partial = sent.filter((s) => s.ok && s.info.accepted.length === 1).length;
  // The items are queued as each message's journal record is stored, soon after its answer.
  const queued = (await waitFor(async () => {
    const rows = await app.app.db.selectFrom('outbound').select('rcpt_to').where('kind', '=', 'submission').execute();
    return rows.length >= accepted * 2 + partial ? rows : undefined;
  }, 'every accepted recipient queued', 30_000))!;
  t.true(queued.length <= 5, `${queued.length} recipients queued against a limit of 5`);
  t.is(queued.length, accepted * 2 + partial);
  t.true(accepted >= 2, 'two messages of two fit');
});
