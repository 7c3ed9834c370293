import test from 'ava';
import { createMailChanges } from '../../src/emails/mail-changes.js';
import { changePayloads, createChangeRelay, parseChangePayload } from '../../src/emails/postgres/mail-change-relay.js';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { createLogger } from '../../src/logger.js';
import { eventually } from '../helpers/nodes.js';
import { freshPostgresDatabase } from '../helpers/pg.js';

// The relay of committed mail changes between nodes on one PostgreSQL database (emails/pg-changes.ts),
// with two connections standing for two nodes.

test('payloads stay under PostgreSQL\'s 8000-byte limit and read back to the same ids', (t) => {
  const ids = Array.from({ length: 5000 }, (_, i) => 1_000_000 + i * 7);
  const payloads = changePayloads(ids);
  t.true(payloads.length > 1);
  for (const p of payloads) t.true(Buffer.byteLength(p) < 8000, `payload of ${p.length} bytes`);
  t.deepEqual(payloads.flatMap(parseChangePayload), ids);
  t.deepEqual(changePayloads([]), []);
  for (const bad of ['', 'x', '1,,2', '1;DROP', '-1', '1.5']) t.deepEqual(parseChangePayload(bad), [], bad);
});

test('a change committed on one node reaches the other node\'s listeners once, and its own listeners once', async (t) => {
  const url = await freshPostgresDatabase(t);
  const [a, b] = [await openPostgresDatabase(url), await openPostgresDatabase(url)];
  t.teardown(async () => { await a.close(); await b.close(); });
  const logger = createLogger('silent');
  const node = (db: typeof a) => {
    const relay = createChangeRelay(db.session, logger);
    const changes = createMailChanges((ids) => relay.publish(ids));
    const heard: number[] = [];
    changes.listen((ids) => heard.push(...ids));
    return { relay, changes, heard };
  };
  const [na, nb] = [node(a), node(b)];
  await na.relay.listen(na.changes);
  await nb.relay.listen(nb.changes);

  na.changes.committed([3, 1, 3]);
  await eventually('B hears of A\'s change', async () => (nb.heard.length >= 2 ? true : undefined), 10_000, 10);
  t.deepEqual(nb.heard.sort(), [1, 3]);

  // Many commits at once: gathered, split under the payload limit, and each id heard on B.
  const many = Array.from({ length: 3000 }, (_, i) => 100 + i);
  for (let i = 0; i < many.length; i += 100) na.changes.committed(many.slice(i, i + 100));
  nb.changes.committed([42]);
  await eventually('B hears of every id', async () => (many.every((id) => nb.heard.includes(id)) ? true : undefined), 10_000, 20);
  await eventually('A hears of B\'s change', async () => (na.heard.includes(42) ? true : undefined), 10_000, 10);
  // A told itself of its own commits when it made them; its NOTIFYs coming back are not told again.
  // A marker from B, committed after all of A's (B heard them all): notifications arrive in commit
  // order, so once A hears the marker its own NOTIFYs have come back too.
  nb.changes.committed([7777]);
  await eventually('A hears B\'s marker', async () => (na.heard.includes(7777) ? true : undefined), 10_000, 10);
  t.is(na.heard.filter((id) => id === 1).length, 1);
  t.is(na.heard.length, 2 + many.length + 2);
});
