import test from 'ava';
import { sql } from 'kysely';
import { startTestApp } from '../helpers/app.js';
import { deliver, inboundBody, listAll, makeInbox, postInbound, waitForEmails } from '../helpers/emails.js';
import { createAlias } from '../helpers/mailboxes.js';
import { onPostgres } from '../helpers/pg.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';

test('an alias stores a copy per local destination and queues a forward per external one; catch-all too', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const box = await makeInbox(app, { count: 2 });
  await subscribeAll(t, app, box.key);
  const [a, b] = box.mailboxes;
  t.is((await createAlias(app, box.key, box.domain, { address: `team@${box.domain}`, goto: [a.address, b.address, 'out@elsewhere.example'] })).body.status, 'completed');
  t.is((await createAlias(app, box.key, box.domain, { catch_all: true, goto: b.address })).body.status, 'completed');
  const teamId = await deliver(app, box.key, `Team@${box.domain}`, { subject: 'to the team' });
  await deliver(app, box.key, `whoever@${box.domain}`, { subject: 'caught' });
  const all = await waitForEmails(app, box.key, 3);
  t.deepEqual(all.map((e) => [e.subject, e.mailbox_id, e.to_email]).sort(), [
    ['caught', b.id, `whoever@${box.domain}`],
    ['to the team', a.id, `team@${box.domain}`],
    ['to the team', b.id, `team@${box.domain}`],
  ].sort());
  const forwards = await app.app.db.selectFrom('outbound').select(['rcpt_to', 'mail_from', 'kind', 'inbound_id', 'email_id']).where('kind', '=', 'forward').execute();
  t.is(forwards.length, 1);
  t.like(forwards[0], { rcpt_to: 'out@elsewhere.example', mail_from: 'ann@sender.example', kind: 'forward' });
  t.true(all.some((e) => e.id === forwards[0].email_id), 'the forward names a stored copy of its message');
  // The forward keeps its message; nothing else stays queued.
  const inbound = await app.app.db.selectFrom('inbound').select(['id', 'status', 'message']).execute();
  t.deepEqual(inbound.map((r) => [r.id, r.status]), [[forwards[0].inbound_id, 'stored']]);
  t.is(JSON.parse(inbound[0].message).messageId, teamId);
  // A second post of the same message_id to the alias is a duplicate for its mailboxes.
  t.is((await postInbound(app, box.key, inboundBody(`team@${box.domain}`, { message_id: teamId }))).status, 409);
  const events = await app.app.db.selectFrom('events').select(['type', 'mailbox_id']).where('type', '=', 'email.received').execute();
  t.is(events.length, 3);
});

test('a mailbox over its quota refuses new mail with 422, and overQuota reports it', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1 }).where('id', '=', box.mailboxId).execute();
  const half = 'x'.repeat(600 * 1024);
  await deliver(app, box.key, box.address, { body_text: half });
  const over = await postInbound(app, box.key, inboundBody(box.address, { body_text: half }));
  t.is(over.status, 422);
  t.is(over.body.reason, 'mailbox over quota');
  t.deepEqual(await app.app.emails.ingest.overQuota([box.mailboxId, box.mailboxes[1].id], 600 * 1024), [box.mailboxId]);
  t.deepEqual(await app.app.emails.ingest.overQuota([box.mailboxId]), []);
  // Unlimited mailboxes take it; small mail still fits in the first.
  await deliver(app, box.key, box.mailboxes[1].address, { body_text: half });
  await deliver(app, box.key, box.address, { body_text: 'small' });
  t.is((await waitForEmails(app, box.key, 3)).length, 3);
  // Deleting mail frees its room.
  const big = (await listAll(app, box.key, `mailbox_id=${box.mailboxId}`)).find((e) => e.size > 1000);
  t.is((await app.del(`/v1/emails/${big.id}`, box.key)).status, 200);
  t.is((await postInbound(app, box.key, inboundBody(box.address, { body_text: half }))).status, 200);
});

test('deleting a mailbox removes its stored mail, search entries and pending reservations, and sync reports its mail deleted', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  const [a, b] = box.mailboxes;
  await Promise.all([
    deliver(app, box.key, a.address, { subject: 'gone soon', attachments: [{ filename: 'f.txt', content_type: 'text/plain', content: 'aGk=' }] }),
    deliver(app, box.key, b.address, { subject: 'stays here' }),
  ]);
  await waitForEmails(app, box.key, 2);
  const since = new Date(Date.now() - 60_000).toISOString();
  const synced = await app.get(`/v1/emails/sync?since=${encodeURIComponent(since)}`, box.key);
  const gone = synced.body.data.find((e: any) => e.subject === 'gone soon');
  t.truthy(gone, 'a sync client has the message');
  const r = await app.post('/v1/delete/mailbox/bulk', box.key, { Mailboxes: [a.address] });
  t.is(r.status, 200);
  const task = await app.pollTask('/v1/get/delete/mailbox/bulk', box.key, r.body.task_id);
  t.is(task.body.results[a.address].status, 'deleted');
  const left = await listAll(app, box.key);
  t.deepEqual(left.map((e) => e.subject), ['stays here']);
  t.is((await app.get(`/v1/emails/${gone.id}`, box.key)).status, 404);
  // The same sync again: the message is now a tombstone, after every earlier change.
  const after = (await app.get(`/v1/emails/sync?since=${encodeURIComponent(since)}`, box.key)).body.data;
  const tombstone = after.find((e: any) => e.id === gone.id);
  t.deepEqual(Object.keys(tombstone).sort(), ['deleted', 'deleted_at', 'id', 'mailbox_id', 'updated_at']);
  t.like(tombstone, { id: gone.id, mailbox_id: a.id, deleted: true });
  t.true(tombstone.updated_at > gone.updated_at);
  t.is(after[after.length - 1].id, gone.id, 'the newest change');
  // Only the narrow row stays, for the tombstone.
  const rows = await app.app.db.selectFrom('emails').select(['mailbox_id', 'deleted_at']).orderBy('id').execute();
  t.deepEqual(rows.map((x) => [x.mailbox_id, x.deleted_at !== null]).sort(), [[a.id, true], [b.id, false]].sort());
  t.is((await app.app.db.selectFrom('attachments').select('id').execute()).length, 0);
  t.is((await app.app.db.selectFrom('email_contents').select('email_id').execute()).length, 1);
  t.deepEqual((await app.get('/v1/emails?q=gone', box.key)).body.data, []);
  // The index entry went with the email (FTS5 on SQLite, a tsvector row on PostgreSQL).
  const fts = onPostgres
    ? (await sql`SELECT email_id FROM emails_fts WHERE document @@ to_tsquery('simple', 'gone')`.execute(app.app.db)).rows
    : await app.app.sqlite.prepare("SELECT rowid FROM emails_fts WHERE emails_fts MATCH 'gone'").all();
  t.deepEqual(fts, []);
});
