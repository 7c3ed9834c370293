import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';
import { PRIVATE_HOOKS, subscribeAll, waitFor } from '../helpers/webhooks.js';

/*
 * One state, three faces (DECISIONS.md section 14): what IMAP changes, the API and webhooks show,
 * and what the API or SMTP delivery changes, an open IMAP session is told.
 */

test('STORE +FLAGS \\Seen marks the email read in the API and fires email.read once; \\Flagged shows in flags', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, box.key);
  await deliver(app, box.key, box.address);
  const [item] = await waitForEmails(app, box.key, 1);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  const r = await c.cmd('c', 'STORE 1 +FLAGS (\\Seen \\Flagged $Label1)');
  t.regex(r, /\* 1 FETCH \(FLAGS \((?:\\Recent )?\\Seen \\Flagged \$Label1\)\)/);
  t.regex(r, /^c OK/m);
  const got = await app.get(`/v1/emails/${item.id}`, box.key);
  t.true(got.body.data.is_read);
  t.deepEqual(got.body.data.flags, ['\\Flagged', '$Label1']);
  await waitFor(() => hooks.requests.some((q) => q.body?.event === 'email.read'), 'email.read webhook', 20_000);
  await c.cmd('d', 'STORE 1 +FLAGS.SILENT (\\Seen)');
  // Events are queued in the transaction of the change: once STORE answered, a second email.read would be there.
  const queued = await app.app.db.selectFrom('webhook_deliveries').select('event_type').where('event_type', '=', 'email.read').execute();
  t.is(queued.length, 1, 'setting \\Seen again is not a second read');
  const off = await c.cmd('e', 'STORE 1 -FLAGS (\\Seen $Label1)');
  t.regex(off, /\* 1 FETCH \(FLAGS \((?:\\Recent )?\\Flagged\)\)/);
  t.false((await app.get(`/v1/emails/${item.id}`, box.key)).body.data.is_read);
});

test('an API read shows as \\Seen in an open session, an API delete as EXPUNGE; IMAP expunge is the API soft delete', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  const hooks = await subscribeAll(t, app, box.key);
  await deliver(app, box.key, box.address);
  await deliver(app, box.key, box.address);
  await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 3);
  const [newest, middle, oldest] = items;
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await c.cmd('b', 'SELECT INBOX'), /\* 3 EXISTS/);

  t.is((await app.post(`/v1/emails/${oldest.id}/read`, box.key)).status, 200);
  t.regex(await c.cmd('c', 'NOOP'), /\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\\Seen\)\)/);

  t.is((await app.del(`/v1/emails/${middle.id}`, box.key)).status, 200);
  const noop = await c.cmd('d', 'NOOP');
  t.regex(noop, /\* 2 EXPUNGE/);

  await c.cmd('e', 'STORE 2 +FLAGS.SILENT (\\Deleted)');
  const ex = await c.cmd('f', 'EXPUNGE');
  t.regex(ex, /\* 2 EXPUNGE/);
  t.is((await app.get(`/v1/emails/${newest.id}`, box.key)).status, 404);
  await waitFor(() => hooks.requests.filter((q) => q.body?.event === 'email.deleted').length === 2, 'two email.deleted webhooks', 20_000);
  const sync = await app.get('/v1/emails/sync?since=2000-01-01T00:00:00Z', box.key);
  t.true(sync.body.data.some((x: any) => x.id === newest.id && x.deleted === true), 'tombstone in sync');
});
