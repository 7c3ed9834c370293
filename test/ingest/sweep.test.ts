import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { createBlobStore } from '../../src/ingest/blobs.js';
import { pgBlobs, sha256Of } from '../../src/ingest/postgres/blobs.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { deliver, inboundBody, makeInbox, postInbound, waitForMessage } from '../helpers/emails.js';
import { onPostgres } from '../helpers/pg.js';

const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : [d.name]));
/** The blobs stored: files under blobs/ on SQLite, rows of `blobs` on PostgreSQL. */
const countBlobs = async (app: TestClient) =>
  (onPostgres ? Number((await app.app.db.selectFrom('blobs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) : files(join(app.dataDir, 'blobs')).length);
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('the hourly sweep removes files no row names, and only once they are an hour old', async (t) => {
  const clock = manualClock(Date.now());
  const app = await startTestApp(t, { clock });
  const box = await makeInbox(app, { count: 2 });
  const kept = await waitForMessage(app, box.key, await deliver(app, box.key, box.mailboxes[1].address, { attachments: [{ filename: 'keep.txt', content_type: 'text/plain', content: b64('kept') }] }));
  const dup = await deliver(app, box.key, box.address, { attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: b64('first') }] });
  // Refused after its blob was written: the blob is an orphan.
  t.is((await postInbound(app, box.key, inboundBody(box.address, { message_id: dup, attachments: [{ filename: 'b.txt', content_type: 'text/plain', content: b64('refused') }] }))).status, 409);
  await waitForMessage(app, box.key, dup);
  // Purged with its mailbox: another orphan.
  const r = await app.post('/v1/delete/mailbox/bulk', box.key, { Mailboxes: [box.address] });
  await app.pollTask('/v1/get/delete/mailbox/bulk', box.key, r.body.task_id);
  writeFileSync(join(app.dataDir, 'tmp', '0123abcd-0000-4000-8000-000000000000.blob'), 'half written');
  t.is(await countBlobs(app), 3);
  await app.app.cron.run('ingest.sweep-orphans');
  t.is(await countBlobs(app), 3, 'young blobs stay');
  clock.advance(2 * 3600_000);
  await app.app.cron.run('ingest.sweep-orphans');
  t.is(await countBlobs(app), 1);
  t.false(existsSync(join(app.dataDir, 'tmp', '0123abcd-0000-4000-8000-000000000000.blob')));
  const url = (await app.get(`/v1/emails/${kept.id}/attachments/${kept.attachments[0].id}`, box.key)).body.data.url;
  const res = await fetch(app.base + new URL(url).pathname.replace(/^\/api/, ''));
  t.is(await res.text(), 'kept');
});

test('content stored again re-dates its blob, so the sweep spares it until the new row can name it', async (t) => {
  const clock = manualClock(Date.now());
  const app = await startTestApp(t, { clock });
  const box = await makeInbox(app);
  await waitForMessage(app, box.key, await deliver(app, box.key, box.address, { attachments: [{ filename: 'again.txt', content_type: 'text/plain', content: b64('again') }] }));
  const r = await app.post('/v1/delete/mailbox/bulk', box.key, { Mailboxes: [box.address] });
  await app.pollTask('/v1/get/delete/mailbox/bulk', box.key, r.body.task_id);
  clock.advance(2 * 3600_000);
  // A message being prepared carries the same content: its blob is written "again" (SQLite: the
  // file exists; PostgreSQL: the row does, and is touched in the transaction that will name it).
  const blobs = createBlobStore(app.dataDir, () => clock.now());
  const sha256 = sha256Of(Buffer.from('again'));
  if (onPostgres) await pgBlobs.touch(app.app.db, [sha256], clock.now());
  else t.is(await blobs.putBlob(Buffer.from('again')), sha256);
  const has = async () => (onPostgres ? (await pgBlobs.present(app.app.db, [sha256])).has(sha256) : blobs.hasBlob(sha256));
  await app.app.cron.run('ingest.sweep-orphans');
  t.true(await has(), 'old by its first write, young by the second');
  clock.advance(2 * 3600_000);
  await app.app.cron.run('ingest.sweep-orphans');
  t.false(await has(), 'still named by no row an hour later: removed');
});
