import test from 'ava';
import type { ImapFlow } from 'imapflow';
import { imapClient, PASSWORD } from '../helpers/imap.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { startDovecot } from '../helpers/dovecot.js';
import { capturedLogger } from '../helpers/logs.js';

const ALLOW = { MAILSTEAD_IMPORT_ALLOW_PRIVATE: 'true' };

/** A message of the source: plain, an mbox trap (`From ` lines), no Message-ID, or with an attachment. */
function rawMessage(i: number, folder: string): string {
  const head = [`From: Sender ${i} <s${i}@old.example>`, 'To: owner@old.example', `Date: Tue, 2 Jan 2024 10:${String(i % 60).padStart(2, '0')}:00 +0000`, `Subject: ${folder} ${i}`];
  if (i % 7 !== 3) head.push(`Message-ID: <m${i}.${folder.replace(/\W/g, '')}@old.example>`);
  if (i % 5 === 1) return [...head, 'Content-Type: text/plain', '', 'From the start of a line', '>From quoted', `body ${i}`, ''].join('\r\n');
  if (i % 5 === 2) {
    return [...head, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', `see ${i}`, '--b',
      'Content-Type: application/octet-stream; name="a.bin"', 'Content-Transfer-Encoding: base64', '', Buffer.alloc(2000 + i, i).toString('base64'), '--b--', ''].join('\r\n');
  }
  return [...head, '', `Plain body ${i}.`, ''].join('\r\n');
}

/** Folders of the source and the flags of their messages. */
const SOURCE: Array<{ path: string; ours: string; count: number }> = [
  { path: 'INBOX', ours: 'INBOX', count: 14 },
  { path: 'Sent', ours: 'Sent', count: 6 },
  { path: 'Projects/2024', ours: 'Projects/2024', count: 5 },
  { path: 'Archive', ours: 'Archive', count: 0 },
];
const flagsOf = (i: number): string[] => [['\\Seen'], ['\\Seen', '\\Answered'], ['\\Flagged', 'ClientTag'], [], ['$Label1', '\\Seen', '\\Draft']][i % 5]!;

async function seed(client: ImapFlow): Promise<number> {
  let n = 0;
  for (const f of SOURCE) {
    if (f.path !== 'INBOX' && f.path !== 'Sent') await client.mailboxCreate(f.path);
    for (let i = 0; i < f.count; i++, n++) {
      await client.append(f.path, rawMessage(i, f.path), flagsOf(i), new Date(Date.UTC(2023, i % 12, 1 + i, 8, i, 30)));
    }
  }
  return n;
}

type Snapshot = Array<{ source: string; flags: string[]; date: number }>;

/** Every message of a folder in UID order: bytes, flags (no \Recent) and INTERNALDATE. */
async function snapshot(client: ImapFlow, folder: string): Promise<Snapshot> {
  const lock = await client.getMailboxLock(folder);
  try {
    if (!client.mailbox || client.mailbox.exists === 0) return [];
    const out: Snapshot = [];
    for await (const m of client.fetch('1:*', { uid: true, source: true, flags: true, internalDate: true })) {
      out.push({ source: m.source!.toString('latin1'), flags: [...m.flags!].filter((f) => f !== '\\Recent').sort(), date: new Date(m.internalDate!).getTime() });
    }
    return out;
  } finally {
    lock.release();
  }
}

async function startImport(app: TestClient, key: string, address: string, body: Record<string, unknown>) {
  const r = await app.post(`/v1/mailboxes/${address}/import`, key, body);
  if (r.status !== 200) throw new Error(`import: ${r.status} ${JSON.stringify(r.body)}`);
  return app.pollTask('/v1/get/import', key, r.body.task_id, 90_000);
}

test('an IMAP import copies folders, bytes, flags, keywords and dates from Dovecot, and a second run skips them all', async (t) => {
  t.timeout(180_000);
  const dovecot = await startDovecot(t, { alice: 'old-secret' });
  const total = await seed(await dovecot.client('alice'));
  const app = await startTestApp(t, { env: ALLOW });
  const box = await makeInbox(app);
  const source = { source: 'imap', host: '127.0.0.1', port: dovecot.port, security: 'none', username: 'alice', password: 'old-secret' };

  // Dovecot adds its own special-use folders (Drafts, Junk, Trash); each is copied.
  const listed = (await (await dovecot.client('alice')).list()).filter((f) => !f.flags.has('\\Noselect') && !f.flags.has('\\NonExistent'));
  const done = await startImport(app, box.key, box.address, source);
  t.is(done.status, 200, JSON.stringify(done.body));
  t.is(done.body.status, 'completed');
  t.like(done.body.results, { status: 'completed', folders: listed.length, messages_total: total, messages_imported: total, messages_skipped: 0 });
  t.true(done.body.results.bytes > 0);
  t.is(done.body.total_email, total);

  const theirs = await dovecot.client('alice');
  const ours = await imapClient(t, app.imapPort, box.address, PASSWORD);
  const ourFolders = (await ours.list()).map((f) => f.path);
  for (const f of SOURCE) {
    t.true(ourFolders.includes(f.ours), `folder ${f.ours} exists`);
    const a = await snapshot(theirs, f.path);
    const b = await snapshot(ours, f.ours);
    t.is(b.length, f.count, `${f.ours} holds every message`);
    t.deepEqual(b, a, `${f.ours}: bytes, flags, keywords and dates as in the source`);
  }

  // The password is not kept once the task ended: not in the payload, not in the results.
  const row = await app.app.db.selectFrom('tasks').select(['payload', 'result']).where('id', '=', Number(done.body.task_id)).executeTakeFirstOrThrow();
  t.false(row.payload.includes('password'), 'no sealed password left');
  t.false(`${row.payload}${row.result}`.includes('old-secret'));
  // Imported mail fires no email.received.
  const events = await app.app.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', 'email.received').executeTakeFirstOrThrow();
  t.is(Number(events.n), 0);

  const again = await startImport(app, box.key, box.address, source);
  t.like(again.body.results, { status: 'completed', messages_total: total, messages_imported: 0, messages_skipped: total });
  t.is((await snapshot(ours, 'INBOX')).length, SOURCE[0]!.count, 'no duplicates');
});

test('wrong credentials fail the task with the server\'s answer; only named folders are copied; no password is logged', async (t) => {
  t.timeout(120_000);
  const dovecot = await startDovecot(t, { bob: 'bob-right-Zx81' });
  await seed(await dovecot.client('bob'));
  const logs = capturedLogger('debug');
  const app = await startTestApp(t, { env: ALLOW, logger: logs.logger });
  const box = await makeInbox(app);
  const base = { source: 'imap', host: '127.0.0.1', port: dovecot.port, security: 'none', username: 'bob' };

  const failed = await startImport(app, box.key, box.address, { ...base, password: 'bob-wrong-Qk42' });
  t.is(failed.status, 200);
  t.is(failed.body.status, 'failed');
  t.is(failed.body.results.status, 'failed');
  t.regex(failed.body.results.error, /Login to 127\.0\.0\.1 failed: .*Authentication failed/i);
  const row = await app.app.db.selectFrom('tasks').select(['payload']).where('id', '=', Number(failed.body.task_id)).executeTakeFirstOrThrow();
  t.false(row.payload.includes('password'));

  const named = await startImport(app, box.key, box.address, { ...base, password: 'bob-right-Zx81', folders: ['Projects/2024'] });
  t.like(named.body.results, { status: 'completed', folders: 1, messages_imported: 5 });
  const missing = await startImport(app, box.key, box.address, { ...base, password: 'bob-right-Zx81', folders: ['Nope'] });
  t.regex(missing.body.results.error, /No folder "Nope"/);

  // Three imports logged at debug level, a failed login among them: neither password is in a line.
  t.regex(logs.text(), /import/i, 'the imports were logged');
  t.false(logs.text().includes('bob-right-Zx81'));
  t.false(logs.text().includes('bob-wrong-Qk42'));
});

test('over quota the import fails and says so, keeping what it imported', async (t) => {
  t.timeout(120_000);
  const dovecot = await startDovecot(t, { carol: 'pw' });
  const big = (i: number) => [`Message-ID: <big${i}@old.example>`, `Subject: big ${i}`, '', 'x'.repeat(400 * 1024), ''].join('\r\n');
  dovecot.seed('carol', 'INBOX', [0, 1, 2, 3].map((i) => ({ raw: big(i), date: new Date(Date.UTC(2022, 0, i + 1)), info: 'S' })));
  const app = await startTestApp(t, { env: ALLOW });
  const box = await makeInbox(app);
  await app.app.db.updateTable('mailboxes').set({ quota_mb: 1 }).where('id', '=', box.mailboxId).execute();
  const done = await startImport(app, box.key, box.address, { source: 'imap', host: '127.0.0.1', port: dovecot.port, security: 'none', username: 'carol', password: 'pw' });
  t.is(done.body.status, 'failed');
  t.regex(done.body.results.error, /over its quota/);
  t.is(done.body.results.messages_imported, 2);
  const ours = await imapClient(t, app.imapPort, box.address, PASSWORD);
  t.is((await snapshot(ours, 'INBOX')).length, 2, 'what fitted is kept');
});

test('private hosts are refused unless allowed; another tenant\'s mailbox is 404', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const body = { source: 'imap', host: '127.0.0.1', port: 143, security: 'none', username: 'u', password: 'p' };
  for (const host of ['127.0.0.1', '10.1.2.3', 'localhost', '192.168.0.10', '[::1]']) {
    const r = await app.post(`/v1/mailboxes/${box.address}/import`, box.key, { ...body, host });
    t.is(r.status, 422, host);
    t.regex(r.body.reason, /public hosts only/);
  }
  const other = await makeInbox(app);
  const r = await app.post(`/v1/mailboxes/${box.address}/import`, other.key, { ...body, host: '203.0.113.9' });
  t.is(r.status, 404);
  t.is((await app.get(`/v1/mailboxes/${box.address}/export?format=mbox`, other.key)).status, 404);
  t.is((await app.post(`/v1/mailboxes/${box.address}/import`, box.key, { ...body, source: 'pop3' })).status, 422);
  const unknownTask = await app.get('/v1/get/import?task_id=999999', box.key);
  t.is(unknownTask.status, 404);
});

/** A TCP server on loopback that accepts and never greets: an IMAP import against it stays running. */
async function silentServer(t: import('ava').ExecutionContext): Promise<number> {
  const net = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => undefined); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close(); });
  return (server.address() as import('node:net').AddressInfo).port;
}

test('a tenant has at most two imports under way (429); a stop queues a running import again with its sealed password', async (t) => {
  t.timeout(120_000);
  const port = await silentServer(t);
  const app = await startTestApp(t, { env: ALLOW });
  const box = await makeInbox(app);
  const body = { source: 'imap', host: '127.0.0.1', port, security: 'none', username: 'u', password: 'kept-while-running' };
  const first = await app.post(`/v1/mailboxes/${box.address}/import`, box.key, body);
  const second = await app.post(`/v1/mailboxes/${box.address}/import`, box.key, body);
  t.is(first.status, 200);
  t.is(second.status, 200);
  const third = await app.post(`/v1/mailboxes/${box.address}/import`, box.key, body);
  t.is(third.status, 429);
  t.regex(third.body.reason, /At most 2 imports/);
  // Another tenant is not held up by this one's limit.
  const other = await makeInbox(app);
  t.is((await app.post(`/v1/mailboxes/${other.address}/import`, other.key, body)).status, 200);

  const deadline = Date.now() + 30_000;
  for (;;) {
    const p = await app.get(`/v1/get/import?task_id=${first.body.task_id}`, box.key);
    if (p.body.status === 'running') { t.is(p.body.results.status, 'running'); break; }
    if (Date.now() > deadline) t.fail(`still ${p.body.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await app.stop();
  // Read back by a server started again on the same data directory (and database).
  const next = await startTestApp(t, { env: ALLOW, dataDir: app.dataDir });
  const again = await next.app.db.selectFrom('tasks').select(['status', 'payload']).where('id', '=', Number(first.body.task_id)).executeTakeFirstOrThrow();
  t.true(['queued', 'running'].includes(again.status), again.status);
  t.true(again.payload.includes('password_sealed'), 'the sealed password waits for the resumed run');
  t.false(again.payload.includes('kept-while-running'), 'sealed, not in clear');
});
