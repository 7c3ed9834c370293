import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { capturedLogger } from '../helpers/logs.js';
import { onPostgres } from '../helpers/pg.js';
import { runCli } from '../helpers/process.js';
import { listAll, provision, sendMail, sendOn, sendOverConnections } from '../helpers/smtp.js';
import { poll } from '../helpers/poll.js';

const COUNT = 100;
const CONNECTIONS = 4;

/**
 * A genuine storage failure for chosen messages only: the database refuses to insert an email whose
 * subject starts with "poison" (as a corrupt index page or a constraint would), whatever batch it
 * is in; every other message stores as usual.
 */
async function refusePoison(app: TestClient): Promise<void> {
  if (onPostgres) {
    await sql`CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.subject LIKE 'poison%' THEN RAISE EXCEPTION 'poison refused by the test'; END IF; RETURN NEW; END $$`.execute(app.app.db);
    await sql`CREATE TRIGGER refuse_poison BEFORE INSERT ON emails FOR EACH ROW EXECUTE FUNCTION refuse_poison()`.execute(app.app.db);
  } else {
    await sql`CREATE TRIGGER refuse_poison BEFORE INSERT ON emails WHEN NEW.subject LIKE 'poison%'
      BEGIN SELECT RAISE(ABORT, 'poison refused by the test'); END`.execute(app.app.db);
  }
}

const allowPoison = (app: TestClient) => (onPostgres ? sql`DROP TRIGGER refuse_poison ON emails` : sql`DROP TRIGGER refuse_poison`).execute(app.app.db);

const message = (subject: string, id: string) => `From: a@sender.example\r\nTo: box@aside.test\r\nSubject: ${subject}\r\nMessage-ID: <${id}@sender.example>\r\n\r\nbody of ${subject}\r\n`;

/** The server's clock, running in real time plus an offset the test moves on to make retries due. */
function offsetClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, skip(ms: number) { offset += ms; } };
}

/** A server with a mailbox, an admin key and the helpers both tests use. */
async function world(t: ExecutionContext) {
  const clock = offsetClock();
  const logs = capturedLogger('info');
  const app = await startTestApp(t, { clock, logger: logs.logger });
  const { key } = await provision(app, 'aside.test', ['box']);
  const admin = await app.keyFor({ admin: true });
  const env: Record<string, string> = onPostgres ? { MAILSTEAD_DATABASE_URL: app.config.databaseUrl! } : {};
  return {
    app, key, admin, logs,
    cli: (...args: string[]) => runCli(app.dataDir, ['set-aside', ...args], env),
    setAside: async () => (await app.get('/v1/ingest/set-aside', admin)).body.data as any[],
    gauge: async () => Number(/^mailstead_ingest_set_aside (\d+)$/m.exec(await (await fetch(`http://127.0.0.1:${app.httpPort}/metrics`)).text())?.[1]),
    send: (subject: string, id: string) => sendMail(app.smtpPort, { from: 'a@sender.example', to: ['box@aside.test'] }, message(subject, id)),
    /** Polls `done` (bounded), moving the clock on so retries that wait are due at once. */
    async until<T>(what: string, done: () => Promise<T | undefined | false>): Promise<T> {
      return poll(what, done, { timeoutMs: 45_000, everyMs: 100, done: (v) => Boolean(v), between: () => clock.skip(6000) }) as Promise<T>;
    },
  };
}

test('a message that always fails to store is set aside while the next 100 are stored; admins list it, the gauge counts it, a retry sends it through once', async (t) => {
  const { app, key, admin, logs, cli, setAside, gauge, send, until } = await world(t);
  await refusePoison(app);
  t.regex((await send('poison one', 'poison-1')).response, /^250 /);
  await sendOverConnections(app.smtpPort, COUNT, CONNECTIONS, async (c, n) => {
    t.regex((await sendOn(c, { from: 'a@sender.example', to: ['box@aside.test'] }, message(`ordinary ${n}`, `ordinary-${n}`))).response, /^250 /);
  });
  const stored = await until('the 100 ordinary messages listed', async () => { const l = await listAll(app, key); return l.length >= COUNT && l; });
  t.is(stored.length, COUNT, 'every ordinary message is stored, none waits behind the poison');
  t.false(stored.some((e) => e.subject.startsWith('poison')));

  const [aside] = await until('the poison set aside', async () => { const l = await setAside(); return l.length > 0 && l; });
  t.like(aside, { kind: 'smtp', attempts: 3, recipients: ['box@aside.test'] });
  t.regex(aside.reason, /poison refused by the test/);
  t.true(aside.size > message('poison one', 'poison-1').length, 'its size is that of the raw bytes kept');
  t.regex(aside.received_at, /^\d{4}-\d\d-\d\dT/);
  t.is((await setAside()).length, 1);
  t.is(await gauge(), 1, 'the gauge counts it');
  const line = logs.records().find((l) => l.msg?.startsWith('inbound message set aside'))!;
  t.like(line, { level: 50, inbound_id: aside.id, attempts: 3 });
  t.regex(line.reason, /poison refused by the test/, 'the log line says why');
  t.deepEqual((await app.get('/v1/set-aside/inbound', admin)).body.data, [aside], 'listed beside the other queues\' set-aside rows');
  t.is((await app.get('/v1/ingest/set-aside', key)).status, 403, 'not for keys of ordinary tenants');
  t.is((await app.post(`/v1/ingest/set-aside/${aside.id}/retry`, key)).status, 403);
  t.is((await app.del(`/v1/ingest/set-aside/${aside.id}`, key)).status, 403);
  t.is((await app.get('/v1/ingest/set-aside')).status, 401);

  const listed = await cli('list');
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(JSON.parse(listed.stdout).map((m: any) => m.id), [aside.id], 'the CLI lists it');

  // A retry sends it through once: still refused, it is set aside again after that one try.
  const retried = await cli('retry', String(aside.id));
  t.is(retried.code, 0, retried.stderr);
  t.is(retried.stdout, 'queued\n');
  const again = await until('set aside again after one more try', async () => (await setAside()).find((m) => m.id === aside.id && m.set_aside_at !== aside.set_aside_at));
  t.is(again.attempts, 3);

  // Once the fault is gone, a retry (here through the API) stores it.
  await allowPoison(app);
  t.is((await app.post(`/v1/ingest/set-aside/${aside.id}/retry`, admin)).status, 200);
  const all = await until('the retried message listed', async () => { const l = await listAll(app, key); return l.length > COUNT && l; });
  t.true(all.some((e) => e.subject === 'poison one'));
  t.deepEqual(await setAside(), []);
  t.is(await gauge(), 0);
  t.is((await app.post(`/v1/ingest/set-aside/${aside.id}/retry`, admin)).status, 404, 'no longer set aside');
});

test('discard deletes a set-aside message and its bytes; an id not set aside is a 404 and a usage error', async (t) => {
  const { app, admin, cli, setAside, send, until } = await world(t);
  await refusePoison(app);
  t.regex((await send('poison two', 'poison-2')).response, /^250 /);
  const [aside] = await until('the poison set aside', async () => { const l = await setAside(); return l.length > 0 && l; });
  t.is(aside.attempts, 3);
  const discarded = await cli('discard', String(aside.id));
  t.is(discarded.code, 0, discarded.stderr);
  t.is(discarded.stdout, 'discarded\n');
  t.deepEqual(await setAside(), []);
  t.is(await app.app.db.selectFrom('inbound').select('id').where('id', '=', aside.id).executeTakeFirst(), undefined, 'its row and raw bytes are gone');
  t.is((await app.del(`/v1/ingest/set-aside/${aside.id}`, admin)).status, 404);
  t.is((await app.post('/v1/ingest/set-aside/0/retry', admin)).status, 422, 'ids are validated');
  const again = await cli('discard', String(aside.id));
  t.is(again.code, 2, 'an id no longer set aside is a usage error');
  t.is(again.stdout, '');
  t.regex(again.stderr, /nothing set aside in inbound with id/);
});
