import test from 'ava';
import net from 'node:net';
import type { PreAcceptance } from '../../../src/inbound/spam-verdict.js';
import { createRspamdTrainer } from '../../../src/spam/policy/rspamd.js';
import { startTestApp } from '../../helpers/app.js';
import { RSPAMD_TRIGGERS, startRspamd } from '../../helpers/rspamd.js';
import { provision, sendMail, waitForEmails } from '../../helpers/smtp.js';
import { lastCheck } from '../../helpers/poll.js';

const message = (subject: string) =>
  `From: Alice <alice@sender.example>\r\nTo: bob@rspamd.test\r\nSubject: ${subject}\r\nDate: Sat, 28 Nov 2026 04:00:00 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@sender.example>\r\n\r\nA few words of an ordinary message body, long enough for a Bayes classifier to learn\r\nfrom: rspamd wants at least eleven tokens before it learns anything about a message at all.\r\n`;

type Sent = { code: number | undefined; response: string };
const send = (port: number, from: string, subject: string): Promise<Sent> =>
  sendMail(port, { from, to: ['bob@rspamd.test'] }, message(subject)).then(
    (r) => ({ code: 250, response: r.response }),
    (err: { responseCode?: number; response?: string }) => ({ code: err.responseCode, response: err.response ?? '' }),
  );

/** Starts the app with the rspamd filter at `url`, and records what reaches the parser as `spam` by MAIL FROM. */
async function appWithRspamd(t: Parameters<typeof startTestApp>[0], url: string, controller?: { url: string; password: string }) {
  const app = await startTestApp(t, { env: { MAILSTEAD_SPAM_FILTER: 'rspamd', MAILSTEAD_RSPAMD_URL: url,
    ...(controller ? { MAILSTEAD_RSPAMD_CONTROLLER_URL: controller.url, MAILSTEAD_RSPAMD_PASSWORD: controller.password } : {}) } });
  const { key } = await provision(app, 'rspamd.test', ['bob']);
  // The real parser still parses; the test only watches what the classify step will be handed.
  const seen = new Map<string, PreAcceptance | undefined>();
  const parser = app.app.emails.parser;
  app.app.emails.ingest.setRawParser(async (raw, delivery) => {
    seen.set(delivery.mailFrom ?? '', delivery.spam);
    return parser(raw, delivery);
  });
  return { app, key, seen };
}

/** Messages refused before the 250 (the verdict `rejected` in /metrics), or 0. */
async function refusals(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('mailstead_spam_verdicts_total{result="rejected"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

test.serial('rspamd\'s actions before the 250: reject 550 5.7.1, greylist 451 4.7.1, add header junk, no action ham, with score, threshold and symbols', async (t) => {
  t.timeout(180_000);
  const rspamd = await startRspamd(t);
  const { app, key, seen } = await appWithRspamd(t, rspamd.url, { url: rspamd.controllerUrl, password: rspamd.password });

  const rejected = await send(app.smtpPort, 'a@sender.example', `buy now ${RSPAMD_TRIGGERS.reject}`);
  t.is(rejected.code, 550);
  t.regex(rejected.response, /^550 5\.7\.1 /);
  t.is(await refusals(app.httpPort), 1);

  const deferred = await send(app.smtpPort, 'b@sender.example', `later ${RSPAMD_TRIGGERS.greylist}`);
  t.is(deferred.code, 451);
  t.regex(deferred.response, /^451 4\.7\.1 /);

  t.is((await send(app.smtpPort, 'c@sender.example', `offer ${RSPAMD_TRIGGERS.addHeader}`)).code, 250);
  t.is((await send(app.smtpPort, 'd@sender.example', 'lunch on Friday')).code, 250);
  const [inboxItem] = await waitForEmails(app, key, 1);
  const [junkItem] = await waitForEmails(app, key, 1, 'folder=Junk');

  const junk = seen.get('c@sender.example')?.rspamd;
  t.true(typeof junk === 'object', 'the verdict travelled with the envelope');
  if (typeof junk !== 'object') return;
  t.like(junk, { verdict: 'junk', filter: 'rspamd', threshold: 15 });
  t.true(junk.score >= 8);
  t.like(junk.reasons.find((r) => r.rule === 'MAILSTEAD_TEST_JUNK'), { score: 8 });
  t.true(junk.reasons.every((r) => r.score !== 0 && /^[A-Z0-9_]+$/.test(r.rule)));

  const ham = seen.get('d@sender.example')?.rspamd;
  t.like(ham, { verdict: 'ham', filter: 'rspamd', threshold: 15 });
  t.false(seen.has('a@sender.example') || seen.has('b@sender.example'), 'refused messages were never stored');

  // The stored copies carry rspamd's verdict: junk in Junk, ham in INBOX.
  const junkEmail = (await app.get(`/v1/emails/${junkItem.id}`, key)).body.data;
  t.regex(junkEmail.subject, /^offer/);
  t.like(junkEmail.spam, { verdict: 'junk', filter: 'rspamd', threshold: 15 });
  const hamEmail = (await app.get(`/v1/emails/${inboxItem.id}`, key)).body.data;
  t.is(hamEmail.subject, 'lunch on Friday');
  t.like(hamEmail.spam, { verdict: 'ham', filter: 'rspamd' });

  // "Junk" on the ham message trains rspamd through its controller (the trainer of MAILSTEAD_SPAM_FILTER=rspamd).
  t.is((await app.post(`/v1/emails/${inboxItem.id}/junk`, key)).status, 200);
  // rspamd's log names a message learned as spam (a second request for it says it "has been already
  // learned as spam"); a message it refused to learn (too few tokens) is logged otherwise and does not count.
  const learned = () => rspamd.log().split('\n').filter((l) => l.includes('<lunchonFriday@sender.example>') && /learned (message )?as spam/i.test(l));
  t.true((await lastCheck(learned, { timeoutMs: 30_000, everyMs: 200, done: (l) => l.length > 0 })).length > 0, 'rspamd learned the message');
});

test('rspamd down or slower than 5 s: the message is taken, marked unavailable (the builtin verdict applies)', async (t) => {
  t.timeout(120_000);
  // A port nobody listens on, then a server that accepts and never answers.
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as net.AddressInfo; s.close(() => resolve(port)); });
  });
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => { sockets.add(s); s.on('error', () => undefined); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => { for (const s of sockets) s.destroy(); silent.close(); });

  const down = await appWithRspamd(t, `http://127.0.0.1:${closed}`);
  t.is((await send(down.app.smtpPort, 'down@sender.example', 'rspamd is down')).code, 250);
  await waitForEmails(down.app, down.key, 1);
  t.deepEqual(down.seen.get('down@sender.example'), { rspamd: 'unavailable' });
  const [stored] = await waitForEmails(down.app, down.key, 1);
  const email = (await down.app.get(`/v1/emails/${stored.id}`, down.key)).body.data;
  t.is(email.spam.filter, 'builtin', 'the builtin verdict applies');
  t.true(email.spam.reasons.some((r: { rule: string }) => r.rule === 'RSPAMD_UNAVAILABLE'));

  const slow = await appWithRspamd(t, `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`);
  t.is((await send(slow.app.smtpPort, 'slow@sender.example', 'rspamd is slow')).code, 250);
  await waitForEmails(slow.app, slow.key, 1);
  t.deepEqual(slow.seen.get('slow@sender.example'), { rspamd: 'unavailable' });
  t.true(sockets.size >= 1, 'the silent rspamd was asked');
});

test.serial('training through the controller: /learnspam and /learnham with the password; a wrong password is an error', async (t) => {
  t.timeout(180_000);
  const rspamd = await startRspamd(t);
  const trainer = createRspamdTrainer({ rspamdControllerUrl: rspamd.controllerUrl, rspamdPassword: rspamd.password });
  const words = (seed: string) => Array.from({ length: 40 }, (_, i) => `${seed}${i}`).join(' ');
  await trainer.train(Buffer.from(message('cheap pills') + words('pill')), 'spam');
  await trainer.train(Buffer.from(message('minutes of the meeting') + words('agenda')), 'ham');
  // Learning the same message again the same way is not an error.
  await trainer.train(Buffer.from(message('cheap pills') + words('pill')), 'spam');
  // Each resolved only on rspamd's 200 {"success":true} (or its "already learned" for the repeat).
  // Teaching the spam message as ham now is accepted too: rspamd replaces the earlier learning.
  await trainer.train(Buffer.from(message('cheap pills') + words('pill')), 'ham');

  const wrong = createRspamdTrainer({ rspamdControllerUrl: rspamd.controllerUrl, rspamdPassword: 'not-the-password' });
  const err = await t.throwsAsync(wrong.train(Buffer.from(message('x')), 'spam'));
  t.notRegex(err?.message ?? '', /not-the-password/);
});
