import test from 'ava';
import { databaseFile } from '../../src/db/connection.js';
import { openReader } from '../../src/db/reader.js';
import { encodeListCursor } from '../../src/emails/cursor.js';
import { ftsMatch } from '../../src/emails/fts.js';
import { createReadPool } from '../../src/emails/read-pool.js';
import { runReadJob, type ReadJob } from '../../src/emails/reading.js';
import { createEmailReads } from '../../src/emails/store.js';
import { startTestApp } from '../helpers/app.js';
import { threadReady } from './thread-ready.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';

const at = (minute: number) => new Date(Date.UTC(2024, 4, 1, 10, minute)).toISOString();

test('reader threads answer every read with the very bytes the main thread gives', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  const [a, b] = box.mailboxes;
  for (let m = 0; m < 12; m++) {
    await deliver(app, box.key, m % 2 ? b.address : a.address, {
      received_at: at(m), subject: m % 4 === 0 ? `quarterly report ${m}` : `note ${m}`, body_text: `line\u0001 "quoted" \\ ${m} ✓`,
    });
  }
  const all = await waitForEmails(app, box.key, 12);
  t.is((await app.post(`/v1/emails/${all[3].id}/read`, box.key)).status, 200);
  t.is((await app.del(`/v1/emails/${all[5].id}`, box.key)).status, 200);
  const tenantId = (await app.app.tenants.authenticate(box.key))!.tenantId;

  // What the route answers is what the main thread computes, with JSON's own Content-Type.
  const listed = await fetch(`${app.base}/v1/emails?per_page=5`, { headers: { authorization: `Bearer ${box.key}` } });
  t.is(listed.headers.get('content-type'), 'application/json; charset=utf-8');
  const text = await listed.text();
  t.is(Number(listed.headers.get('content-length')), Buffer.byteLength(text));

  const file = databaseFile(app.dataDir);
  const here = createEmailReads(openReader(file));
  const pool = createReadPool({ file, threads: 1, startRate: 0, inline: (job) => runReadJob(here, job) });
  t.teardown(() => pool.close());
  await threadReady(t, pool, { op: 'get', tenantId, id: all[0].id });

  const filter = { tenantId };
  const cursorAt = (i: number) => ({ receivedAt: Date.parse(all[i].received_at), id: all[i].id });
  const jobs: ReadJob[] = [
    { op: 'list', query: { filter, match: null, pos: null, perPage: 5 } },
    { op: 'list', query: { filter, match: null, pos: { ...cursorAt(4), side: 'below' }, perPage: 3 } },
    { op: 'list', query: { filter, match: null, pos: { ...cursorAt(8), side: 'above' }, perPage: 3 } },
    { op: 'list', query: { filter: { tenantId, mailboxId: b.id, unread: true }, match: null, pos: null, perPage: 100 } },
    { op: 'list', query: { filter, match: ftsMatch('quarterly rep'), pos: null, perPage: 2 } },
    { op: 'list', query: { filter, match: ftsMatch('quarterly'), pos: { ...cursorAt(0), side: 'below' }, perPage: 2 } },
    { op: 'list', query: { filter, match: ftsMatch('quarterly'), pos: { ...cursorAt(11), side: 'above' }, perPage: 2 } },
    { op: 'sync', query: { tenantId, from: { atLeast: 0 }, perPage: 4 } },
    { op: 'sync', query: { tenantId, from: { atLeast: 0 }, perPage: 100, mailboxId: a.id } },
    { op: 'get', tenantId, id: all[0].id },
    { op: 'get', tenantId, id: all[5].id },
    { op: 'get', tenantId: tenantId + 1000, id: all[0].id },
  ];
  for (const job of jobs) {
    const threaded = pool.run(job);
    t.not(threaded, null, JSON.stringify(job));
    t.is(await threaded, runReadJob(here, job), JSON.stringify(job));
  }
  // All at once: one batch, answered in order of ids whatever the order of completion.
  const together = jobs.map((job) => pool.run(job));
  t.true(together.every((p) => p !== null));
  t.deepEqual(await Promise.all(together), jobs.map((job) => runReadJob(here, job)));
  t.is(JSON.parse(runReadJob(here, jobs[0])!).data.length, 5);
  t.is(runReadJob(here, jobs[10]), null, 'deleted mail is not there');
  t.is(runReadJob(here, jobs[0]), text, 'the route answers with the same text');
  t.is(JSON.parse((await pool.run(jobs[1]))!).meta.prev_cursor, encodeListCursor({ direction: 'prev', ...cursorAt(6) }), 'the deleted row is skipped');
});

test('a reader thread that cannot start leaves the reads to the main thread and is not restarted at once', async (t) => {
  const errors: Error[] = [];
  const pool = createReadPool({ file: '/nonexistent/mailstead.db', threads: 1, startRate: 0, inline: () => 'inline', onError: (e) => errors.push(e) });
  t.teardown(() => pool.close());
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null);
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null, 'a second read in the same turn starts the thread');
  for (const deadline = Date.now() + 30_000; errors.length === 0;) {
    if (Date.now() > deadline) throw new Error('no error reported');
    await new Promise((r) => setTimeout(r, 20));
  }
  // A thread starts inside run (synchronously) when it may: two reads in one turn would start one now.
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null);
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null);
  t.is(pool.threads(), 0, 'no new thread within the pause');
  t.is(errors.length, 1);
  t.is(pool.ready(), 0);
});

test('reads slower than the start rate stay on the main thread; a faster stream starts the threads', async (t) => {
  const pool = createReadPool({ file: '/nonexistent/mailstead.db', threads: 1, startRate: 5, inline: () => 'inline' });
  t.teardown(() => pool.close());
  const job: ReadJob = { op: 'get', tenantId: 1, id: 1 };
  for (let i = 0; i < 5; i++) t.is(pool.run(job), null);
  t.is(pool.threads(), 0, 'five reads within a second start nothing');
  t.is(pool.run(job), null, 'the sixth starts a thread and is still read by the caller');
  t.is(pool.threads(), 1);
});

test('reads one at a time start no thread however fast they come; reads that arrive together do', async (t) => {
  const pool = createReadPool({ file: '/nonexistent/mailstead.db', threads: 1, startRate: 5, inline: () => 'inline' });
  t.teardown(() => pool.close());
  const job: ReadJob = { op: 'get', tenantId: 1, id: 1 };
  const nextTurn = () => new Promise((r) => setImmediate(r));
  for (let i = 0; i < 20; i++) {
    t.is(pool.run(job), null);
    await nextTurn();
  }
  t.is(pool.threads(), 0, 'twenty reads within a second, each in a turn of its own, start nothing');
  t.is(pool.run(job), null);
  t.is(pool.run(job), null, 'a second read in the same turn starts a thread and is still read by the caller');
  t.is(pool.threads(), 1);
});

test('one read at a time keeps one reader thread; overlapping reads start the next', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 1 });
  await deliver(app, box.key, box.mailboxes[0].address, { received_at: at(1), subject: 'hello' });
  await waitForEmails(app, box.key, 1);
  const file = databaseFile(app.dataDir);
  const here = createEmailReads(openReader(file));
  const pool = createReadPool({ file, threads: 2, startRate: 0, inline: (job) => runReadJob(here, job) });
  t.teardown(() => pool.close());
  const tenantId = (await app.app.tenants.authenticate(box.key))!.tenantId;
  const job: ReadJob = { op: 'list', query: { filter: { tenantId }, match: null, pos: null, perPage: 5 } };
  t.is(pool.run(job), null);
  t.is(pool.run(job), null, 'a second read in the same turn starts the first thread');
  for (const deadline = Date.now() + 30_000; pool.ready() === 0;) {
    if (Date.now() > deadline) throw new Error('reader thread did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  for (let i = 0; i < 50; i++) t.is(await pool.run(job), runReadJob(here, job));
  t.is(pool.threads(), 1, 'fifty reads one after another: still one thread');
  const together = [pool.run(job), pool.run(job)];
  t.is(pool.threads(), 2, 'a read while another is under way starts the second');
  t.deepEqual(await Promise.all(together), [runReadJob(here, job), runReadJob(here, job)]);
});
