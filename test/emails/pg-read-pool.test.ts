import test from 'ava';
import { encodeListCursor } from '../../src/emails/cursor.js';
import { createPgEmailReads } from '../../src/emails/postgres/reads.js';
import { runPgReadJob } from '../../src/emails/postgres/read-job.js';
import { encodePgSearch, pgSearch } from '../../src/emails/postgres/search.js';
import { createReadPool } from '../../src/emails/read-pool.js';
import type { ReadJob } from '../../src/emails/reading.js';
import { startTestApp } from '../helpers/app.js';
import { threadReady } from './thread-ready.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

// PostgreSQL reader threads (pg-read-worker.ts): each with a pool of its own, answering with the
// very bytes the main thread's reads give. The server from the sources runs none (tests run
// through tsx), so the pool is driven here directly, as read-pool.test.ts does for SQLite's.

const at = (minute: number) => new Date(Date.UTC(2024, 4, 1, 10, minute)).toISOString();
const match = (q: string) => encodePgSearch(pgSearch(q)!);

test('PostgreSQL reader threads answer every read with the very bytes the main thread gives', async (t) => {
  const url = await freshPostgresDatabase(t);
  const app = await startTestApp(t, { env: { MAILSTEAD_DATABASE_URL: url } });
  const box = await makeInbox(app, { count: 2 });
  const [a, b] = box.mailboxes;
  for (let m = 0; m < 12; m++) {
    await deliver(app, box.key, m % 2 ? b.address : a.address, {
      received_at: at(m % 7), subject: m % 4 === 0 ? `quarterly report ${m}` : `note ${m}`, body_text: `line\u0001 "quoted" \\ ${m} ✓`,
    });
  }
  const all = await waitForEmails(app, box.key, 12);
  t.is((await app.post(`/v1/emails/${all[3].id}/read`, box.key)).status, 200);
  t.is((await app.del(`/v1/emails/${all[5].id}`, box.key)).status, 200);
  const tenantId = (await app.app.tenants.authenticate(box.key))!.tenantId;
  const listed = await (await fetch(`${app.base}/v1/emails?per_page=5`, { headers: { authorization: `Bearer ${box.key}` } })).text();

  const here = createPgEmailReads(app.app.db);
  const pool = createReadPool({ postgres: { url, connections: 2 }, threads: 1, startRate: 0, inline: (job) => runPgReadJob(here, job) });
  t.teardown(() => pool.close());
  await threadReady(t, pool, { op: 'get', tenantId, id: all[0].id });

  const filter = { tenantId };
  const cursorAt = (i: number) => ({ receivedAt: Date.parse(all[i].received_at), id: all[i].id });
  const jobs: ReadJob[] = [
    { op: 'list', query: { filter, match: null, pos: null, perPage: 5 } },
    { op: 'list', query: { filter, match: null, pos: { ...cursorAt(4), side: 'below' }, perPage: 3 } },
    { op: 'list', query: { filter, match: null, pos: { ...cursorAt(8), side: 'above' }, perPage: 3 } },
    { op: 'list', query: { filter, match: null, pos: { ...cursorAt(11), side: 'below' }, perPage: 3 } },
    { op: 'list', query: { filter: { tenantId, mailboxId: b.id, unread: true }, match: null, pos: null, perPage: 100 } },
    { op: 'list', query: { filter, match: match('quarterly rep'), pos: null, perPage: 2 } },
    { op: 'list', query: { filter, match: match('quarterly'), pos: { ...cursorAt(0), side: 'below' }, perPage: 2 } },
    { op: 'list', query: { filter, match: match('quarterly'), pos: { ...cursorAt(11), side: 'above' }, perPage: 2 } },
    { op: 'sync', query: { tenantId, from: { atLeast: 0 }, perPage: 4 } },
    { op: 'sync', query: { tenantId, from: { atLeast: 0 }, perPage: 100, mailboxId: a.id } },
    { op: 'get', tenantId, id: all[0].id },
    { op: 'get', tenantId, id: all[5].id },
    { op: 'get', tenantId: tenantId + 1000, id: all[0].id },
  ];
  const inline = await Promise.all(jobs.map((job) => runPgReadJob(here, job)));
  for (const [i, job] of jobs.entries()) {
    const threaded = pool.run(job);
    t.not(threaded, null, JSON.stringify(job));
    t.is(await threaded, inline[i], JSON.stringify(job));
  }
  // All at once: one batch out, answers back as they settle, each to its own request.
  const together = jobs.map((job) => pool.run(job));
  t.true(together.every((p) => p !== null));
  t.deepEqual(await Promise.all(together), inline);
  t.is(inline[0], listed, 'the route answers with the same text');
  t.is(JSON.parse(inline[0]!).data.length, 5);
  t.is(inline[11], null, 'deleted mail is not there');
  t.is(inline[12], null, 'another tenant\'s id is not there');
  t.is(JSON.parse(inline[1]!).meta.prev_cursor, encodeListCursor({ direction: 'prev', ...cursorAt(6) }), 'the deleted row is skipped');
});

test('a PostgreSQL reader thread that cannot connect answers each read with the error, as the pool here would, rather than leaving it waiting', async (t) => {
  // A socket folder that does not exist: the thread starts, and each read fails to connect.
  const pool = createReadPool({
    postgres: { url: 'postgres://nobody@localhost/none?host=%2Fnonexistent', connections: 1 }, threads: 1, startRate: 0,
    inline: async () => 'inline',
  });
  t.teardown(() => pool.close());
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null);
  t.is(pool.run({ op: 'get', tenantId: 1, id: 1 }), null);
  for (const deadline = Date.now() + 30_000; pool.ready() === 0;) {
    if (Date.now() > deadline) throw new Error('reader thread did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  const threaded = pool.run({ op: 'get', tenantId: 1, id: 1 });
  t.not(threaded, null);
  await t.throwsAsync(threaded!, { message: /ENOENT|connect/ });
});
