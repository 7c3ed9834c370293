import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, imapClient, PASSWORD, rawImap } from '../helpers/imap.js';
import { PRIVATE_HOOKS, subscribeAll, waitFor } from '../helpers/webhooks.js';

const message = (subject: string, body = 'appended body') =>
  `From: me@client.example\r\nTo: you@client.example\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@client.example>\r\n\r\n${body}\r\n`;

test('APPEND stores the bytes in the folder with flags and date, answers APPENDUID, and fires no email.received', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, box.key);
  const client = await imapClient(t, imapPort, box.address);
  const raw = message('Draft one');
  const res = await client.append('Drafts', raw, ['\\Draft', '\\Seen', '$Work'], new Date(Date.UTC(2026, 0, 5, 9, 0, 0)));
  t.truthy(res);
  if (!res) return;
  t.is(res.uid, 1);
  t.true(Number(res.uidValidity) > 0);
  const [item] = await waitForEmails(app, box.key, 1, 'folder=Drafts');
  t.is(item.folder, 'Drafts');
  t.is(item.subject, 'Draft one');
  t.true(item.is_read);
  t.is(item.received_at, '2026-01-05T09:00:00.000Z');
  const got = await app.get(`/v1/emails/${item.id}`, box.key);
  t.deepEqual(got.body.data.flags, ['\\Draft', '$Work']);
  const bytes = await fetch(`${app.base}/v1/emails/${item.id}/raw`, { headers: { authorization: `Bearer ${box.key}` } }).then((r) => r.text());
  t.is(bytes, raw, 'the appended bytes are the message');
  t.deepEqual((await app.get('/v1/emails', box.key)).body.data, [], 'nothing in INBOX');
  await deliver(app, box.key, box.address);
  await waitFor(() => hooks.requests.some((q) => q.body?.event === 'email.received'), 'email.received of the delivery', 20_000);
  t.is(hooks.requests.filter((q) => q.body?.event === 'email.received').length, 1, 'only the delivery fired email.received');
  t.regex((await rawImap(t, imapPort).then(async (c) => { await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`); return c.cmd('b', 'APPEND Nowhere {3+}\r\nabc'); })), /^b NO \[TRYCREATE\]/m);
});

test('APPEND counts toward the quota: one that fits is stored, one past it is NO [OVERQUOTA] (GETQUOTA/GETQUOTAROOT/SETQUOTA: quota.test.ts)', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1 }).where('id', '=', box.mailboxId).execute();
  const small = message('small', 'x'.repeat(2000));
  t.regex(await c.cmd('d', `APPEND INBOX {${small.length}+}\r\n${small}`), /^d OK \[APPENDUID \d+ 1\]/m);
  const big = message('big', 'y'.repeat(1100 * 1024));
  t.regex(await c.cmd('f', `APPEND INBOX {${big.length}+}\r\n${big}`, 30_000), /^f NO \[OVERQUOTA\]/m);
  t.regex(await c.cmd('s', 'STATUS INBOX (MESSAGES)'), /^\* STATUS INBOX \(MESSAGES 1\)/m, 'the refused one is not stored');
});
