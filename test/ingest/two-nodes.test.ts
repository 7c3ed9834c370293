import { createHash } from 'node:crypto';
import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase } from '../helpers/pg.js';
import { ingestBacklog, processApi, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { sendOn, smtpClient } from '../helpers/smtp.js';
import { lastCheck } from '../helpers/poll.js';

/** A node's start-up may take long on a loaded shared machine (two at once, each compiling its sources). */
const START_MS = 120_000;

// Two nodes on one PostgreSQL database (DECISIONS.md section 17), each a server process with a data
// directory of its own: this test opens its own database (it runs in the PostgreSQL lane only).

function api(port: number, key: string) {
  const { call, poll } = processApi(port, key, { deadlineMs: 30_000, everyMs: 50 });
  /** Every listed email (all pages). */
  const listAll = async () => {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const r = await call('GET', `/v1/emails?per_page=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      all.push(...r.body.data);
      cursor = r.body.meta.next_cursor;
    } while (cursor);
    return all;
  };
  return { call, poll, listAll };
}

/** Message n; every third has an attachment, whose content repeats across messages (one blob row for several). */
function message(n: number): { raw: string; attachment: number } {
  const head = `From: sender@client.example\r\nTo: pair@pair.test\r\nSubject: pair ${n}\r\nMessage-ID: <pair-${n}@client.example>\r\nMIME-Version: 1.0\r\n`;
  const body = `message ${n} ${createHash('sha256').update(String(n)).digest('hex')}`;
  if (n % 3 !== 0) return { raw: `${head}Content-Type: text/plain\r\n\r\n${body}\r\n`, attachment: 0 };
  const size = 10_000 + (n % 4);
  const bytes = Buffer.alloc(size, n % 4).toString('base64').replace(/.{76}/g, '$&\r\n');
  return {
    raw: `${head}Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n${body}\r\n--b\r\nContent-Type: application/octet-stream; name=a${n}.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n${bytes}\r\n--b--\r\n`,
    attachment: size,
  };
}

test('two nodes on one PostgreSQL database: mail through either is listed once on both; SIGKILL of one under SMTP load loses nothing acknowledged and stores nothing twice', async (t) => {
  t.timeout(480_000);
  const database = { MAILSTEAD_DATABASE_URL: await freshPostgresDatabase(t) };
  const [dirA, dirB] = [tempDir(t), tempDir(t)];
  const tenant = await runCli(dirA, ['tenant', 'create', 'pairtest', '--plan', 'active'], database);
  t.is(tenant.code, 0, tenant.stderr);
  const keyOut = await runCli(dirA, ['key', 'create', '--tenant', 'pairtest', '--perms', 'read,write,inbound,webhook'], database);
  t.is(keyOut.code, 0, keyOut.stderr);
  const key = keyOut.stdout.trim();
  const a: ServerProcess = await startServerProcess(dirA, database, START_MS);
  t.teardown(() => { a.child.kill('SIGKILL'); });
  let b: ServerProcess = await startServerProcess(dirB, database, START_MS);
  t.teardown(() => { b.child.kill('SIGKILL'); });
  const httpA = api(a.httpPort, key);
  const domain = await httpA.call('POST', '/v1/create/domain', { Domain: 'pair.test' });
  t.is((await httpA.poll('/v1/get/domain', domain.body.task_id)).body.status, 'completed');
  const box = await httpA.call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Pair Box', single_bulk: 'single', Domain: 'pair.test', Params: { email_id: 'pair@pair.test', password: 0 } });
  t.is((await httpA.poll('/v1/get/mailbox/single', box.body.task_id)).body.status, 'completed');

  // Four senders on each node deliver numbered messages back to back; node B is killed under them.
  const acked = new Set<number>();
  let next = 0;
  let killedB = false;
  let stopA = false;
  const sender = (node: 'a' | 'b') => async () => {
    const client = await smtpClient(node === 'a' ? a.smtpPort : b.smtpPort);
    try {
      while (!(node === 'a' ? stopA : killedB)) {
        const n = next++;
        try {
          await sendOn(client, { from: 'sender@client.example', to: ['pair@pair.test'] }, message(n).raw);
          acked.add(n);
        } catch {
          return;
        }
      }
    } finally {
      client.close();
    }
  };
  const senders = [...Array.from({ length: 4 }, sender('a')), ...Array.from({ length: 4 }, sender('b'))];
  const deadline = Date.now() + 90_000;
  while (acked.size < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  killedB = true;
  b.child.kill('SIGKILL');
  t.is(await b.exited, 'SIGKILL');
  // Node A goes on accepting for a moment after B died, then stops too.
  const more = acked.size + 30;
  while (acked.size < more && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 5));
  stopA = true;
  await Promise.all(senders);
  t.true(acked.size >= 150, `only ${acked.size} messages acknowledged`);
  const attempted = next;

  // Node A alone stores what both acknowledged (B's half-done batch rolled back when its connections died).
  // Until every acknowledged message is listed and A's backlog gauge (both nodes' queued rows) is
  // empty, so nothing is left that could add a second copy; then list once more.
  await lastCheck(async () => {
    const subjects = new Set((await httpA.listAll()).map((i: any) => i.subject));
    return [...acked].every((n) => subjects.has(`pair ${n}`)) && (await ingestBacklog(a.httpPort)) === 0;
  }, { timeoutMs: 90_000, everyMs: 200 });
  const items: any[] = await httpA.listAll();
  const seen = new Map<number, number>();
  for (const i of items) {
    const n = Number(/^pair (\d+)$/.exec(i.subject)?.[1]);
    t.true(Number.isInteger(n) && n < attempted, `unexpected subject ${i.subject}`);
    seen.set(n, (seen.get(n) ?? 0) + 1);
  }
  for (const n of acked) t.is(seen.get(n), 1, `acknowledged message ${n} is stored exactly once`);
  for (const [n, count] of seen) t.is(count, 1, `message ${n} is stored once`);

  // Node B again: it lists the same mail, and its attachments download from the database.
  b = await startServerProcess(dirB, database, START_MS);
  const httpB = api(b.httpPort, key);
  const onB = await httpB.listAll();
  t.deepEqual(onB.map((i) => i.id).sort((x, y) => x - y), items.map((i) => i.id).sort((x, y) => x - y));
  const withAttachment = items.find((i) => message(Number(/^pair (\d+)$/.exec(i.subject)![1])).attachment > 0)!;
  const got = (await httpB.call('GET', `/v1/emails/${withAttachment.id}`)).body.data;
  const n = Number(/^pair (\d+)$/.exec(withAttachment.subject)![1]);
  t.deepEqual(got.attachments.map((x: any) => x.size), [message(n).attachment]);
  t.log(`${acked.size} acknowledged, ${items.length} stored, ${attempted} attempted`);
  for (const node of [a, b]) node.child.kill('SIGTERM');
  t.deepEqual(await Promise.all([a.exited, b.exited]), [0, 0]);
});
