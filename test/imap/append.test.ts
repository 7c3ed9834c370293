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

test('COPY makes a new email in the target folder; MOVE changes the folder (an update, not a deletion) and expunges it from the session', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, box.key);
  await deliver(app, box.key, box.address, { subject: 'first' });
  await deliver(app, box.key, box.address, { subject: 'second' });
  const items = await waitForEmails(app, box.key, 2);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'CREATE Archive');
  await c.cmd('c', 'SELECT INBOX');
  const copied = await c.cmd('d', 'COPY 1 Archive');
  t.regex(copied, /^d OK \[COPYUID \d+ 1 1\] COPY completed/m);
  const archive = await waitForEmails(app, box.key, 1, 'folder=Archive');
  t.is(archive[0].subject, items[1].subject);
  t.not(archive[0].id, items[1].id, 'a copy is a new email');
  t.regex(await c.cmd('e', 'COPY 1 Nowhere'), /^e NO \[TRYCREATE\]/m);

  const moved = await c.cmd('f', 'UID MOVE 2 Trash');
  t.regex(moved, /\* OK \[COPYUID \d+ 2 1\]/);
  t.regex(moved, /\* 2 EXPUNGE/);
  t.regex(moved, /^f OK/m);
  const after = await app.get(`/v1/emails/${items[0].id}`, box.key);
  t.is(after.status, 200, 'a moved email is still there');
  t.is(after.body.data.folder, 'Trash');
  const sync = await app.get('/v1/emails/sync?since=2000-01-01T00:00:00Z', box.key);
  const change = sync.body.data.find((x: any) => x.id === items[0].id);
  t.is(change.folder, 'Trash');
  t.falsy(change.deleted);
  t.regex(await c.cmd('g', 'STATUS Trash (MESSAGES UIDNEXT)'), /MESSAGES 1 UIDNEXT 2/);
  // Events are queued in the transaction of the change: once MOVE answered, an email.deleted would be there.
  const queued = await app.app.db.selectFrom('webhook_deliveries').select('event_type').execute();
  t.false(queued.some((q) => q.event_type === 'email.deleted'), 'MOVE is not a deletion');
  t.false(hooks.requests.some((q) => q.body?.event === 'email.deleted'));
});

test('APPEND counts toward the quota (NO [OVERQUOTA]); GETQUOTAROOT reports STORAGE in KiB, an unlimited mailbox has no root', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await c.cmd('b', 'GETQUOTAROOT INBOX'), /\* QUOTAROOT INBOX\r\nb OK/);
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1 }).where('id', '=', box.mailboxId).execute();
  const q = await c.cmd('c', 'GETQUOTAROOT INBOX');
  t.regex(q, /\* QUOTAROOT INBOX ""/);
  t.regex(q, /\* QUOTA "" \(STORAGE 0 1024\)/);
  const small = message('small', 'x'.repeat(2000));
  t.regex(await c.cmd('d', `APPEND INBOX {${small.length}+}\r\n${small}`), /^d OK \[APPENDUID \d+ 1\]/m);
  t.regex(await c.cmd('e', 'GETQUOTA ""'), /\* QUOTA "" \(STORAGE 3 1024\)/);
  const big = message('big', 'y'.repeat(1100 * 1024));
  t.regex(await c.cmd('f', `APPEND INBOX {${big.length}+}\r\n${big}`, 30_000), /^f NO \[OVERQUOTA\]/m);
  t.regex(await c.cmd('g', 'SETQUOTA "" (STORAGE 5)'), /^g NO/m);
});

test('another session moving a message out and back is seen as its old UID expunged and the message again under a new UID', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address);
  await waitForEmails(app, box.key, 1);
  const watcher = await rawImap(t, imapPort);
  await watcher.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await watcher.cmd('b', 'SELECT INBOX'), /\* 1 EXISTS/);
  const mover = await rawImap(t, imapPort);
  await mover.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await mover.cmd('b', 'SELECT INBOX');
  t.regex(await mover.cmd('c', 'MOVE 1 Junk'), /^c OK/m);
  await mover.cmd('d', 'SELECT Junk');
  t.regex(await mover.cmd('e', 'MOVE 1 INBOX'), /\* OK \[COPYUID \d+ 1 2\]/);
  const seen = await watcher.cmd('c', 'NOOP');
  t.regex(seen, /\* 1 EXPUNGE\r\n\* 1 EXISTS/);
  t.regex(await watcher.cmd('d', 'FETCH 1 (UID)'), /\* 1 FETCH \(UID 2\)/);
});
