import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { pollUntil } from '../helpers/emails.js';
import { provision, sendMail } from '../helpers/smtp.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';

const raw = (from: string, id: string) => `From: ${from}\r\nTo: ed@lists.test\r\nSubject: lunch?\r\nMessage-ID: <${id}@client.example>\r\n\r\nShall we have lunch on Friday?\r\n`;

test('allow and block lists: 422 for bad patterns and foreign mailboxes, listing and deleting per tenant, no tenant sees another\'s', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'lists.test', ['ed']);
  const other = await app.keyFor();
  for (const body of [
    { kind: 'allow', pattern: 'nope' }, { kind: 'allow', pattern: '@' }, { kind: 'block', pattern: 'a@@b.test' }, { kind: 'block', pattern: '@bad_domain!' },
    { kind: 'deny', pattern: 'a@b.test' }, { kind: 'allow' }, { kind: 'allow', pattern: 'a@b.test', mailbox: 'nobody@lists.test' },
    { kind: 'allow', pattern: 'a@b.test', extra: 1 },
  ]) {
    const r = await app.post('/v1/spam/lists', key, body);
    t.is(r.status, 422, JSON.stringify(body));
  }
  const a = await app.post('/v1/spam/lists', key, { kind: 'allow', pattern: 'Friend@Example.ORG', mailbox: 'ed@lists.test' });
  t.is(a.status, 200);
  t.like(a.body.data, { kind: 'allow', pattern: 'friend@example.org', mailbox: 'ed@lists.test' });
  const b = await app.post('/v1/spam/lists', key, { kind: 'block', pattern: '@spam.example' });
  t.like(b.body.data, { kind: 'block', pattern: '@spam.example', mailbox: null });
  t.deepEqual((await app.get('/v1/spam/lists', key)).body.data.map((e: any) => e.id), [a.body.data.id, b.body.data.id]);
  // Another tenant neither sees nor deletes them, and cannot name this tenant's mailbox.
  t.deepEqual((await app.get('/v1/spam/lists', other)).body.data, []);
  t.is((await app.del(`/v1/spam/lists/${a.body.data.id}`, other)).status, 404);
  t.is((await app.post('/v1/spam/lists', other, { kind: 'allow', pattern: 'x@y.test', mailbox: 'ed@lists.test' })).status, 422);
  t.is((await app.del(`/v1/spam/lists/${a.body.data.id}`, key)).status, 200);
  t.deepEqual((await app.get('/v1/spam/lists', key)).body.data.map((e: any) => e.id), [b.body.data.id]);
  const reader = await app.keyFor({ perms: ['read'] });
  t.is((await app.post('/v1/spam/lists', reader, { kind: 'block', pattern: '@x.test' })).status, 403);
});

test('a block entry (@domain: sub-domains too) files junk with BLOCKLIST; an allow entry for an unauthenticated From is ignored; the webhook says where it went', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const { key } = await provision(app, 'lists.test', ['ed']);
  const hooks = await subscribeAll(t, app, key);
  t.is((await app.post('/v1/spam/lists', key, { kind: 'block', pattern: '@spam.example' })).status, 200);
  t.is((await app.post('/v1/spam/lists', key, { kind: 'allow', pattern: '@friend.example' })).status, 200);
  await sendMail(app.smtpPort, { from: 'x@client.example', to: ['ed@lists.test'] }, raw('Bulk <offers@mail.spam.example>', 'b1'));
  await sendMail(app.smtpPort, { from: 'x@client.example', to: ['ed@lists.test'] }, raw('Pal <pal@friend.example>', 'a1'));
  const junk = await pollUntil(app, key, '/v1/emails?folder=Junk', (r) => r.body.data.length === 1);
  const blocked = (await app.get(`/v1/emails/${junk.body.data[0].id}`, key)).body.data;
  t.like(blocked.spam, { verdict: 'junk', filter: 'builtin' });
  t.deepEqual(blocked.spam.reasons.map((r: any) => r.rule), ['BLOCKLIST']);
  t.true(blocked.flags.includes('$Junk'));
  const inbox = await pollUntil(app, key, '/v1/emails?folder=INBOX', (r) => r.body.data.length === 1);
  const allowed = (await app.get(`/v1/emails/${inbox.body.data[0].id}`, key)).body.data;
  t.is(allowed.spam.verdict, 'ham');
  t.true(allowed.spam.reasons.some((r: any) => r.rule === 'ALLOWLIST_UNAUTHENTICATED'), 'the test DNS publishes no SPF or DKIM: the From does not authenticate');
  const requests = await hooks.waitForCount(2, 30_000);
  const byEmail = new Map(requests.map((r) => [r.body.data.email_id, r.body.data]));
  t.deepEqual(byEmail.get(blocked.id), { email_id: blocked.id, mailbox_id: blocked.mailbox_id, folder: 'Junk', spam_verdict: 'junk' });
  t.deepEqual(byEmail.get(allowed.id), { email_id: allowed.id, mailbox_id: allowed.mailbox_id, folder: 'INBOX', spam_verdict: 'ham' });
});
