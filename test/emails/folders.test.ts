import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';

test('a new mailbox has the five folders; delivered mail lands in INBOX with rising UIDs and shows folder and flags', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const folders = await app.app.db.selectFrom('folders').select(['name', 'special_use', 'uidnext']).where('mailbox_id', '=', box.mailboxId).orderBy('id').execute();
  t.deepEqual(folders.map((f) => [f.name, f.special_use]), [['INBOX', null], ['Sent', '\\Sent'], ['Drafts', '\\Drafts'], ['Trash', '\\Trash'], ['Junk', '\\Junk']]);

  await deliver(app, box.key, box.address);
  await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 2);
  t.deepEqual(items.map((i) => i.folder), ['INBOX', 'INBOX']);
  const rows = await app.app.db.selectFrom('emails').select(['id', 'uid', 'folder']).where('mailbox_id', '=', box.mailboxId).orderBy('id').execute();
  t.deepEqual(rows.map((r) => r.uid), [1, 2]);
  const inbox = await app.app.db.selectFrom('folders').select('uidnext').where('mailbox_id', '=', box.mailboxId).where('name', '=', 'INBOX').executeTakeFirstOrThrow();
  t.is(inbox.uidnext, 3);

  const one = await app.get(`/v1/emails/${items[0].id}`, box.key);
  t.is(one.body.data.folder, 'INBOX');
  t.deepEqual(one.body.data.flags, []);

  const sent = await app.get('/v1/emails?folder=Sent', box.key);
  t.is(sent.status, 200);
  t.deepEqual(sent.body.data, [], 'another folder lists only its own mail');
  const unknown = await app.get('/v1/emails?folder=Nowhere', box.key);
  t.deepEqual([unknown.status, unknown.body.data], [200, []], 'a folder no mailbox has lists nothing');
  const inboxList = await app.get('/v1/emails?folder=INBOX', box.key);
  t.is(inboxList.body.data.length, 2);

  const sync = await app.get('/v1/emails/sync?since=2000-01-01T00:00:00Z', box.key);
  t.true(sync.body.data.every((x: any) => x.folder === 'INBOX'));
});
