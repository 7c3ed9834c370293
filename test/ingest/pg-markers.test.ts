import test from 'ava';
import { sql } from 'kysely';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { createMarkers } from '../../src/mailstore/markers.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

// Runs on PostgreSQL in either lane (it opens a database of its own): the markers' PostgreSQL seam.
const clock = { now: () => Date.now() };

test('on PostgreSQL, writers on two nodes take update markers in commit order through the email_marker row', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const start = (await sql<{ value: number }>`SELECT value FROM email_marker WHERE id = 1`.execute(a.db)).rows[0]!.value;
  t.is(start, 0);
  const nodes = [a, b].map((n) => ({ db: n.db, markers: createMarkers(clock, async () => 0) }));
  // Each transaction takes three markers and records them with the commit order (a sequence bumped last, under the row lock).
  await sql`CREATE TABLE marker_log (marker bigint, committed bigint)`.execute(a.db);
  await sql`CREATE SEQUENCE commit_order`.execute(a.db);
  const runs: Array<Promise<void>> = [];
  for (let i = 0; i < 40; i++) {
    const node = nodes[i % 2]!;
    runs.push(node.db.transaction().execute(async (trx) => {
      await node.markers.within(trx, async () => {
        const taken = [node.markers.next(), node.markers.next(), node.markers.next()];
        const order = (await sql<{ n: number }>`SELECT nextval('commit_order') AS n`.execute(trx)).rows[0]!.n;
        for (const m of taken) await sql`INSERT INTO marker_log VALUES (${m}, ${order})`.execute(trx);
      });
    }));
  }
  await Promise.all(runs);
  const rows = (await sql<{ marker: number; committed: number }>`SELECT marker, committed FROM marker_log ORDER BY committed, marker`.execute(a.db)).rows;
  t.is(rows.length, 120);
  for (let i = 1; i < rows.length; i++) t.true(rows[i]!.marker > rows[i - 1]!.marker, `marker ${i} rises with commit order`);
  const stored = (await sql<{ value: number }>`SELECT value FROM email_marker WHERE id = 1`.execute(a.db)).rows[0]!.value;
  t.is(stored, rows.at(-1)!.marker, 'the row holds the newest marker handed out');
});
