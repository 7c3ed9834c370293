import test, { type ExecutionContext } from 'ava';
import { manualClock } from '../../src/clock.js';
import { openConfiguredDatabase, type AnyDatabase } from '../../src/db/open.js';
import { createLockout, LOCKOUT_FAILURES, LOCKOUT_MS } from '../../src/mailboxes/lockout.js';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';

// The login lock-out store (DECISIONS.md section 13) on the database of the lane: SQLite, or in the
// PostgreSQL lane one database that two handles share, as two nodes do.

/** `count` handles on one database (SQLite: one, a single process owns the file). */
async function databases(t: ExecutionContext, count: number): Promise<AnyDatabase[]> {
  const config = { dataDir: tempDir(t), databaseUrl: onPostgres ? await freshPostgresDatabase(t) : '' };
  const out: AnyDatabase[] = [];
  for (let i = 0; i < (onPostgres ? count : 1); i++) out.push(await openConfiguredDatabase(config));
  t.teardown(async () => { for (const d of out) await d.close(); });
  return out;
}

const IP = '192.0.2.7';

test('ten failures lock the IP for ten minutes after the tenth; a success is not counted; other IPs are not touched', async (t) => {
  const [database] = await databases(t, 1);
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const lockout = createLockout({ db: database!.db, clock });

  const ok = await lockout.begin(IP);
  t.truthy(ok);
  await ok!.forget(); // a successful login
  for (let i = 0; i < LOCKOUT_FAILURES; i++) {
    const attempt = await lockout.begin(IP);
    t.truthy(attempt, `attempt ${i + 1} is let through`);
    await attempt!.fail(); // a wrong password: it stays counted
    clock.advance(1000);
  }
  t.true(await lockout.locked(IP));
  t.is(await lockout.begin(IP), null, 'the eleventh is refused, whatever its password');
  t.truthy(await lockout.begin('192.0.2.8'), 'another IP logs in');

  clock.advance(LOCKOUT_MS - 2000); // just under ten minutes after the tenth
  t.is(await lockout.begin(IP), null, 'refused attempts did not extend the lock');
  clock.advance(1001);
  t.false(await lockout.locked(IP));
  t.truthy(await lockout.begin(IP), 'free ten minutes after the tenth failure');
});

test('guesses sent at once (to two nodes on PostgreSQL) get at most ten tries before the lock-out', async (t) => {
  const handles = await databases(t, 2);
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const lockouts = handles.map((d) => createLockout({ db: d.db, clock }));

  // Thirty attempts at once, spread over the nodes; every one let through fails (its row stays).
  const guess = async (i: number) => {
    const attempt = await lockouts[i % lockouts.length]!.begin(IP);
    await attempt?.fail();
    return attempt;
  };
  const first = await Promise.all(Array.from({ length: 30 }, (_, i) => guess(i)));
  const through = first.filter((a) => a !== null).length;
  t.true(through <= LOCKOUT_FAILURES, `${through} let through`);
  // More, one by one, until the lock holds: never more than ten tries in all.
  let more = 0;
  for (let i = 0; i < 20 && (await guess(i)) !== null; i++) more++;
  t.is(through + more, LOCKOUT_FAILURES, 'ten tries in all');
  for (const l of lockouts) t.true(await l.locked(IP), 'every node sees the lock');
});

test('correct logins at once from one IP all pass: only failures count, never checks in flight', async (t) => {
  const handles = await databases(t, 2);
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const lockouts = handles.map((d) => createLockout({ db: d.db, clock }));
  // Twenty at once over the nodes, each check settling (as a success) some time after its row is taken.
  const logins = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const attempt = await lockouts[i % lockouts.length]!.begin(IP);
    if (attempt) await attempt.forget();
    return attempt !== null;
  }));
  t.deepEqual(logins, Array.from({ length: 20 }, () => true), 'every one let through');
  t.false(await lockouts[0]!.locked(IP));

  // Nine failures, then a burst of ten guesses and ten correct logins: one more failure locks the IP.
  for (let i = 0; i < LOCKOUT_FAILURES - 1; i++) await (await lockouts[0]!.begin(IP))!.fail();
  const burst = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const attempt = await lockouts[i % lockouts.length]!.begin(IP);
    if (attempt && i % 2 === 0) await attempt.fail(); else await attempt?.forget();
    return attempt !== null;
  }));
  t.true(burst.filter(Boolean).length >= 1, 'the first of the burst gets its check');
  t.true(await lockouts[0]!.locked(IP), 'the tenth failure locks the IP');
});
