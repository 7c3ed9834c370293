import { createSocket } from 'node:dgram';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { databaseFile } from '../../src/db/connection.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { startServerProcess } from '../helpers/process.js';
import { provision, sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';

/** A DNS server on 127.0.0.1 that never answers: mail authentication waits for its timeouts (seconds per message). */
async function silentDns(t: ExecutionContext): Promise<string> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  return `127.0.0.1:${socket.address().port}`;
}

/** A message of about `size` bytes from a sender domain of its own (no lookup answered from a cache). */
const message = (n: number, size: number) => ({
  envelope: { from: `a@sender${n}.example`, to: ['box@move.test'] },
  raw: `From: a@sender${n}.example\r\nTo: box@move.test\r\nSubject: m${n}\r\nMessage-ID: <m${n}@sender${n}.example>\r\n\r\n${`${'y'.repeat(998)}\r\n`.repeat(Math.ceil(size / 1000))}body ${n}\r\n`,
});

test('a journal move that fails while the next batch is being parsed is retried, and the server process keeps running', async (t) => {
  const dataDir = tempDir(t);
  const env = { MAILSTEAD_DNS_SERVERS: await silentDns(t) };
  const first = await startTestApp(t, { dataDir, env });
  const setup = await provision(first, 'move.test', ['box']);
  // Everything acknowledged from now on stays in the acceptance journal (moves into the queue fail),
  // in this order: two big messages (raw files), twelve of 200 KB (raw bytes in their records), m4.
  await sql`CREATE TRIGGER fail_moving BEFORE INSERT ON inbound BEGIN SELECT RAISE(ABORT, 'move failure injected by the test'); END`.execute(first.app.db);
  const sent: string[] = [];
  for (const [n, size] of [[2, 5_000_000], [3, 5_000_000], ...Array.from({ length: 12 }, (_, i) => [10 + i, 200_000]), [4, 0]]) {
    const m = message(n, size);
    t.regex((await sendMail(first.smtpPort, m.envelope, m.raw)).response, /^250 /);
    sent.push(`m${n}`);
  }
  await first.stop();
  // Now only m4's record cannot be moved.
  const db = new Database(databaseFile(dataDir));
  t.teardown(() => db.close());
  db.exec(`DROP TRIGGER fail_moving; CREATE TRIGGER fail_moving BEFORE INSERT ON inbound WHEN NEW.message LIKE '%sender4.example%' BEGIN SELECT RAISE(ABORT, 'move failure injected by the test'); END`);

  // The server as deployed, a process of its own: nothing there catches a promise rejected with
  // nobody waiting on it (a test runner would). Its first move (up to 2 MB of records) queues m2,
  // m3 and most of the small ones; a batch holds up to 8 MB, so m2 is parsed and stored alone, then
  // the second move (the rest and m4) fails while the next batch (m3 and the small ones, seconds
  // of parsing: their senders' DNS never answers) is being parsed, when the worker's loop is not
  // waiting on the move. That once ended the process.
  const server = await startServerProcess(dataDir, env);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const gone = () => new Error(`the server is gone: ${server.output().slice(-1500)}`);
  await waitFor(async () => {
    if (server.child.exitCode !== null) throw gone();
    return /ingest batch failed; will retry/.test(server.output());
  }, 'the failed move', 30_000);
  db.exec('DROP TRIGGER fail_moving');

  let listed: string[] = [];
  await waitFor(async () => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/api/v1/emails?per_page=100`, { headers: { authorization: `Bearer ${setup.key}` } })
      .catch(() => { throw gone(); });
    listed = ((await res.json()) as { data: Array<{ subject: string }> }).data.map((e) => e.subject);
    return listed.length >= sent.length;
  }, 'every message listed', 40_000);
  t.deepEqual(listed.sort(), sent.sort());
  t.is(server.child.exitCode, null, 'the server is still running');
});
