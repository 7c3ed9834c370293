import test from 'ava';
import { sql } from 'kysely';
import { pino } from 'pino';
import { startTestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/pg.js';
import { listAll, provision, sendOn, sendOverConnections } from '../helpers/smtp.js';
import { lastCheck, poll } from '../helpers/poll.js';

const COUNT = 300;
const CONNECTIONS = 5;

test('a storage transaction that fails strands no mail: once storing works again, every acknowledged message is stored', async (t) => {
  const lines: Array<{ msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)); } });
  const failures = () => lines.filter((l) => l.msg.startsWith('ingest batch failed')).length;
  const app = await startTestApp(t, { logger });
  const setup = await provision(app, 'fail.test', ['box']);
  // Every storage transaction fails while this trigger exists (a full disk or a corrupt page would
  // fail the same way); the acknowledgements do not depend on it (the journal on SQLite, the queue
  // rows on PostgreSQL hold the mail).
  if (onPostgres) {
    await sql`CREATE FUNCTION fail_storing() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'storage failure injected by the test'; END $$`.execute(app.app.db);
    await sql`CREATE TRIGGER fail_storing BEFORE INSERT ON emails FOR EACH ROW EXECUTE FUNCTION fail_storing()`.execute(app.app.db);
  } else {
    await sql`CREATE TRIGGER fail_storing BEFORE INSERT ON emails BEGIN SELECT RAISE(ABORT, 'storage failure injected by the test'); END`.execute(app.app.db);
  }

  const raw = (n: number) => `From: a@sender.example\r\nTo: box@fail.test\r\nSubject: held ${n}\r\nMessage-ID: <held-${n}@sender.example>\r\n\r\nbody ${n}\r\n`;
  await sendOverConnections(app.smtpPort, COUNT, CONNECTIONS, async (c, n) => {
    t.regex((await sendOn(c, { from: 'a@sender.example', to: ['box@fail.test'] }, raw(n))).response, /^250 /);
  });
  // More than one batch is queued with nothing arriving: the worker picks the next batch while the
  // failing one is stored, so a failure meets a batch picked and not yet stored. Let it fail a few
  // times after the last 250 (each failure is logged).
  const before = failures();
  await poll(() => `storing failed only ${failures() - before} times more`, () => failures() >= before + 3, { timeoutMs: 30_000 });
  t.is((await listAll(app, setup.key)).length, 0, 'nothing is stored while storing fails');

  await (onPostgres ? sql`DROP TRIGGER fail_storing ON emails` : sql`DROP TRIGGER fail_storing`).execute(app.app.db);
  const listed = await lastCheck(() => listAll(app, setup.key), { timeoutMs: 20_000, everyMs: 100, done: (l) => l.length >= COUNT });
  t.is(listed.length, COUNT);
  t.is(new Set(listed.map((e) => e.subject)).size, COUNT, 'each message once');
});
