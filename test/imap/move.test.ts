import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';

// MOVE (RFC 6851) into the folder the message is in: like COPY then EXPUNGE, it gets a new UID.

test('MOVE into the same folder gives the message a new UID: COPYUID, EXPUNGE of the old number, EXISTS of the new', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('c', 'CREATE Box'), /^c OK/m);
  for (const tag of ['a1', 'a2']) t.regex(await appendRaw(c, tag, 'Box', `From: a@x.example\r\nSubject: ${tag}\r\n\r\nbody\r\n`, { flags: '\\Flagged' }), /^a\d OK/);
  const selected = await c.cmd('s', 'SELECT Box');
  const validity = /UIDVALIDITY (\d+)/.exec(selected)![1];
  const moved = await c.cmd('m', 'MOVE 1 Box');
  t.regex(moved, new RegExp(`^\\* OK \\[COPYUID ${validity} 1 3\\]`, 'm'));
  t.regex(moved, /^\* 1 EXPUNGE\r\n(\* [^\r]*\r\n)*\* 2 EXISTS/m);
  t.regex(moved, /^m OK/m);
  const listed = await c.cmd('f', 'FETCH 1:* (UID FLAGS)');
  t.regex(listed, /^\* 1 FETCH \(UID 2 FLAGS \([^)]*\)\)/m);
  t.regex(listed, /^\* 2 FETCH \(UID 3 FLAGS \([^)]*\\Flagged[^)]*\)\)/m, 'the message under its new UID, flags kept');
  t.regex(await c.cmd('u', 'UID MOVE 3 Box'), /^\* OK \[COPYUID \d+ 3 4\]/m);
});

test('MOVE changes the folder (an update, not a deletion) and expunges it from the session', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, box.key);
  await deliver(app, box.key, box.address, { subject: 'first' });
  await deliver(app, box.key, box.address, { subject: 'second' });
  const items = await waitForEmails(app, box.key, 2);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('c', 'SELECT INBOX');
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
