import test from 'ava';
import Database from 'better-sqlite3';
import { databaseFile } from '../../src/db/connection.js';
import { tempDir } from '../helpers/app.js';
import { ingestBacklog, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { submitUntilKilled } from './kill-under-load.js';
import { lastCheck } from '../helpers/poll.js';

const PASSWORD = 'password-123';
const SENDER = 'sender@crash.test';
const FRIEND = 'friend@crash.test';

async function adminKey(dataDir: string): Promise<string> {
  const tenant = await runCli(dataDir, ['tenant', 'create', 'subcrash', '--plan', 'active']);
  if (tenant.code !== 0) throw new Error(tenant.stderr);
  const key = await runCli(dataDir, ['key', 'create', '--tenant', 'subcrash', '--perms', 'read,write,inbound,webhook']);
  if (key.code !== 0) throw new Error(key.stderr);
  return key.stdout.trim();
}

/** The implicit-TLS submission port the server logged. */
async function submissionsPort(server: ServerProcess): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = /"submissions_port":(\d+)/.exec(server.output());
    if (m) return Number(m[1]);
    if (Date.now() > deadline) throw new Error('no submissions_port logged');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Message n: to the hosted friend and to an external address of its own (n names its queue item). */
const message = (n: number) => ({
  envelope: { from: SENDER, to: [FRIEND, `dest${n}@elsewhere.test`] },
  raw: `From: <${SENDER}>\r\nTo: <${FRIEND}>, <dest${n}@elsewhere.test>\r\nSubject: sub ${n}\r\nMessage-ID: <sub-${n}@crash.test>\r\n\r\nbody ${n}\r\n`,
});

test('SIGKILL while sessions submit: after a restart every 250 is in the friend\'s INBOX, the sender\'s Sent and the queue exactly once', async (t) => {
  t.timeout(240_000);
  const dataDir = tempDir(t);
  const key = await adminKey(dataDir);
  let server = await startServerProcess(dataDir);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/api${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };
  const completed = async (path: string, taskId: number) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await call('GET', `${path}?task_id=${taskId}`);
      if (!['queued', 'running'].includes(r.body.status)) return r.body.status;
      if (Date.now() > deadline) throw new Error(`task ${taskId} not done`);
      await new Promise((res) => setTimeout(res, 20));
    }
  };
  const domain = await call('POST', '/v1/create/domain', { Domain: 'crash.test' });
  t.is(await completed('/v1/get/domain', domain.body.task_id), 'completed');
  for (const address of [SENDER, FRIEND]) {
    const box = await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Crash Box', single_bulk: 'single', Domain: 'crash.test', Params: { email_id: address, password: PASSWORD } });
    t.is(await completed('/v1/get/mailbox/single', box.body.task_id), 'completed');
  }

  // Six sessions (one login each) submit numbered messages back to back until the server is killed under them.
  const port = await submissionsPort(server);
  const { acked, attempted } = await submitUntilKilled(t, server, { port, sessions: 6, atLeast: 60, user: SENDER, pass: PASSWORD, message });

  server = await startServerProcess(dataDir);
  // Ingest resumes from its journal and queue: wait until every acknowledged message is stored twice (INBOX and Sent) and the backlog is empty.
  const db = new Database(databaseFile(dataDir), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  const stored = () => db.prepare(`SELECT m.address, e.folder, e.subject, e.read_at FROM emails e JOIN mailboxes m ON m.id = e.mailbox_id WHERE e.subject LIKE 'sub %'`).all() as Array<{ address: string; folder: string; subject: string; read_at: number | null }>;
  await lastCheck(async () => {
    const rows = stored();
    const subjects = (address: string, folder: string) => new Set(rows.filter((r) => r.address === address && r.folder === folder).map((r) => r.subject));
    const inbox = subjects(FRIEND, 'INBOX');
    const sent = subjects(SENDER, 'Sent');
    // Complete, and nothing left in the ingest backlog that could add a second copy.
    return [...acked].every((n) => inbox.has(`sub ${n}`) && sent.has(`sub ${n}`)) && (await ingestBacklog(server.httpPort)) === 0;
  }, { timeoutMs: 90_000, everyMs: 200 });
  const rows = stored();

  const count = (address: string, folder: string) => {
    const seen = new Map<number, number>();
    for (const r of rows.filter((x) => x.address === address && x.folder === folder)) {
      const n = Number(/^sub (\d+)$/.exec(r.subject)?.[1]);
      t.true(Number.isInteger(n) && n < attempted, `unexpected subject ${r.subject}`);
      seen.set(n, (seen.get(n) ?? 0) + 1);
    }
    return seen;
  };
  const inbox = count(FRIEND, 'INBOX');
  const sent = count(SENDER, 'Sent');
  for (const n of acked) {
    t.is(inbox.get(n), 1, `acknowledged message ${n} is in the friend's INBOX once`);
    t.is(sent.get(n), 1, `acknowledged message ${n} is in the sender's Sent once`);
  }
  for (const [n, c] of [...inbox, ...sent]) t.is(c, 1, `message ${n} is stored once per folder`);
  t.true(rows.filter((r) => r.folder === 'Sent').every((r) => r.read_at !== null), 'Sent copies are read');
  t.is(rows.filter((r) => r.address === SENDER && r.folder !== 'Sent').length, 0, 'nothing in the sender\'s other folders');

  const items = db.prepare(`SELECT rcpt_to, email_id FROM outbound WHERE kind = 'submission'`).all() as Array<{ rcpt_to: string; email_id: number | null }>;
  const queued = new Map<number, number>();
  for (const i of items) {
    const n = Number(/^dest(\d+)@elsewhere\.test$/.exec(i.rcpt_to)?.[1]);
    queued.set(n, (queued.get(n) ?? 0) + 1);
  }
  for (const n of acked) t.is(queued.get(n), 1, `acknowledged message ${n} has one queue item`);
  for (const [n, c] of queued) t.is(c, 1, `message ${n} is queued once`);
  t.log(`${acked.size} acknowledged, ${inbox.size} in INBOX, ${sent.size} in Sent, ${items.length} queued, ${attempted} attempted`);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});
