import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails, waitForMessage } from '../helpers/emails.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';

const eventsOf = (app: Awaited<ReturnType<typeof startTestApp>>, emailId: number) =>
  app.app.db.selectFrom('events').select(['type', 'email_id', 'mailbox_id']).where('email_id', '=', emailId).orderBy('id').execute();

test('marking read is idempotent: read_at is set once and email.read is recorded once', async (t) => {
  const clock = manualClock(Date.UTC(2024, 5, 1, 8, 0, 0));
  const app = await startTestApp(t, { clock, env: PRIVATE_HOOKS });
  const box = await makeInbox(app);
  await subscribeAll(t, app, box.key);
  const id = (await waitForMessage(app, box.key, await deliver(app, box.key, box.address))).id;
  t.deepEqual(await eventsOf(app, id), [{ type: 'email.received', email_id: id, mailbox_id: box.mailboxId }]);
  const first = await app.post(`/v1/emails/${id}/read`, box.key);
  t.is(first.status, 200);
  t.deepEqual(first.body, { status: 'success' });
  const readAt = (await app.get(`/v1/emails/${id}`, box.key)).body.data.read_at;
  t.is(readAt, '2024-06-01T08:00:00.000Z');
  clock.advance(60_000);
  t.is((await app.post(`/v1/emails/${id}/read`, box.key)).status, 200);
  t.is((await app.post(`/v1/emails/${id}/read`, box.key)).status, 200);
  const got = (await app.get(`/v1/emails/${id}`, box.key)).body.data;
  t.is(got.read_at, readAt);
  t.true(got.is_read);
  t.deepEqual((await eventsOf(app, id)).map((e) => e.type), ['email.received', 'email.read']);
  t.is((await app.post('/v1/emails/999999/read', box.key)).status, 404);
  t.is((await app.post('/v1/emails/abc/read', box.key)).status, 422);
  for (const spelling of [`0x${id.toString(16)}`, `${id}e0`, `${id}.0`, `+${id}`, `%20${id}`]) {
    const r = await app.post(`/v1/emails/${spelling}/read`, box.key);
    t.is(r.status, 422, spelling);
    t.is(r.body.reason, 'email must be integer', spelling);
  }
  const readOnly = await app.keyFor({ tenant: box.tenant, perms: ['read'] });
  t.is((await app.post(`/v1/emails/${id}/read`, readOnly)).status, 403);
  t.is((await app.del(`/v1/emails/${id}`, readOnly)).status, 403);
  t.is((await app.post(`/v1/emails/${id}/read`, undefined)).status, 401);
});

test('a deleted email answers 404 everywhere, records email.deleted, and leaves a tombstone in sync', async (t) => {
  const clock = manualClock(Date.UTC(2024, 5, 1, 8, 0, 0));
  const app = await startTestApp(t, { clock, env: PRIVATE_HOOKS });
  const box = await makeInbox(app);
  await subscribeAll(t, app, box.key);
  const id = (await waitForMessage(app, box.key, await deliver(app, box.key, box.address))).id;
  const keep = (await waitForMessage(app, box.key, await deliver(app, box.key, box.address))).id;
  clock.advance(1000);
  const del = await app.del(`/v1/emails/${id}`, box.key);
  t.is(del.status, 200);
  t.deepEqual(del.body, { status: 'success' });
  t.is((await app.get(`/v1/emails/${id}`, box.key)).status, 404);
  t.is((await app.del(`/v1/emails/${id}`, box.key)).status, 404);
  t.is((await app.post(`/v1/emails/${id}/read`, box.key)).status, 404);
  t.is((await app.get(`/v1/emails/${id}/raw`, box.key)).status, 404);
  t.deepEqual((await app.get('/v1/emails', box.key)).body.data.map((e: any) => e.id), [keep]);
  t.deepEqual((await eventsOf(app, id)).map((e) => e.type), ['email.received', 'email.deleted']);
  const sync = await app.get('/v1/emails/sync?since=2024-06-01T08:00:00Z', box.key);
  t.is(sync.status, 200);
  const tomb = sync.body.data.find((x: any) => x.id === id);
  t.deepEqual(tomb, { id, mailbox_id: box.mailboxId, deleted: true, deleted_at: '2024-06-01T08:00:01.000Z', updated_at: '2024-06-01T08:00:01.000Z' });
  t.deepEqual(sync.body.data.map((x: any) => x.id), [keep, id], 'ascending by update marker');
  const live = sync.body.data[0];
  t.is(live.updated_at, '2024-06-01T08:00:00.000Z');
  t.false('deleted' in live);
  t.is(live.is_read, false);
});

test('sync lists changes since a time in ascending order with cursor continuation', async (t) => {
  const clock = manualClock(Date.UTC(2024, 5, 1, 8, 0, 0));
  const app = await startTestApp(t, { clock });
  const box = await makeInbox(app);
  // Many changes share one millisecond: the cursor still never repeats or skips one.
  await Promise.all(Array.from({ length: 12 }, () => deliver(app, box.key, box.address)));
  const emails = await waitForEmails(app, box.key, 12);
  clock.advance(5000);
  await app.post(`/v1/emails/${emails[3].id}/read`, box.key);
  await app.del(`/v1/emails/${emails[5].id}`, box.key);
  const seen: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const r = await app.get(`/v1/emails/sync?since=2024-06-01T08:00:00Z&per_page=5${cursor ? `&cursor=${cursor}` : ''}`, box.key);
    t.is(r.status, 200);
    seen.push(...r.body.data);
    t.is(r.body.meta.prev_cursor, null);
    cursor = r.body.meta.next_cursor;
    if (!cursor) break;
  }
  t.is(seen.length, 12);
  t.is(new Set(seen.map((x) => x.id)).size, 12);
  t.deepEqual(seen.slice(-2).map((x) => x.id), [emails[3].id, emails[5].id]);
  t.true(seen[10].is_read);
  t.true(seen[11].deleted);
  const later = await app.get('/v1/emails/sync?since=2024-06-01T08:00:05Z', box.key);
  t.deepEqual(later.body.data.map((x: any) => x.id), [emails[3].id, emails[5].id]);
  t.is((await app.get('/v1/emails/sync?since=2024-06-01T08:00:06Z', box.key)).body.data.length, 0);
  const byBox = await app.get(`/v1/emails/sync?since=2024-06-01T08:00:05Z&mailbox_id=${box.mailboxId + 1000}`, box.key);
  t.deepEqual(byBox.body.data, []);
});

test('sync refuses a missing or invalid since or cursor with 422', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  for (const [q, reason] of [
    ['', /^since is required$/], ['since=', /^since /], ['since=yesterday', /^since /], ['since=2024-02-30', /^since /],
    ['since=2024-02-30T00:00:00Z', /^since must be an ISO 8601 date-time/], ['since=2023-02-29T12:00:00Z', /^since must be an ISO 8601/],
    ['since=2024-01-01T00:00:00Z&cursor=zzz', /^cursor is invalid$/], ['since=2024-01-01T00:00:00Z&per_page=0', /^per_page/],
  ] as const) {
    const r = await app.get(`/v1/emails/sync${q ? '?' + q : ''}`, box.key);
    t.is(r.status, 422, q);
    t.regex(r.body.reason, reason, q);
  }
  const list = await app.get('/v1/emails?per_page=1', box.key);
  t.is(list.status, 200);
  // A list cursor is not a sync cursor.
  await deliver(app, box.key, box.address);
  await deliver(app, box.key, box.address);
  const page = (await waitForEmails(app, box.key, 2)) && (await app.get('/v1/emails?per_page=1', box.key));
  const r = await app.get(`/v1/emails/sync?since=2024-01-01T00:00:00Z&cursor=${page.body.meta.next_cursor}`, box.key);
  t.is(r.status, 422);
  t.is((await app.get('/v1/emails/sync?since=2024-01-01T00:00:00Z', undefined)).status, 401);
  const noRead = await app.keyFor({ tenant: box.tenant, perms: ['write'] });
  t.is((await app.get('/v1/emails/sync?since=2024-01-01T00:00:00Z', noRead)).status, 403);
});
