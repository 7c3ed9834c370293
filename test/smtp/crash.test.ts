import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { ingestBacklog, processApi, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { certificate, rawSession, peerCommonName, sendOn, smtpClient } from '../helpers/smtp.js';
import { lastCheck } from '../helpers/poll.js';

const api = (port: number, key: string) => processApi(port, key);

async function adminKey(dataDir: string, env: Record<string, string>): Promise<string> {
  const tenant = await runCli(dataDir, ['tenant', 'create', 'crashtest', '--plan', 'active'], env);
  if (tenant.code !== 0) throw new Error(tenant.stderr);
  const key = await runCli(dataDir, ['key', 'create', '--tenant', 'crashtest', '--perms', 'read,write,inbound,webhook'], env);
  if (key.code !== 0) throw new Error(key.stderr);
  return key.stdout.trim();
}

/** Message number n: small, with an attachment, or large enough to be spooled to disk. */
function message(n: number): { raw: string; body: string; attachment: number } {
  const body = `message ${n} ` + createHash('sha256').update(String(n)).digest('hex').repeat(n % 10 === 0 ? 9000 : 20);
  const attachment = n % 3 === 0 ? 20_000 + n : 0;
  const head = `From: sender@client.example\r\nTo: crash@crash.test\r\nSubject: crash ${n}\r\nMessage-ID: <crash-${n}@client.example>\r\nMIME-Version: 1.0\r\n`;
  if (!attachment) return { raw: `${head}Content-Type: text/plain\r\n\r\n${body}\r\n`, body, attachment };
  const bytes = Buffer.alloc(attachment, n % 251).toString('base64').replace(/.{76}/g, '$&\r\n');
  return {
    raw: `${head}Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n${body}\r\n--b\r\nContent-Type: application/octet-stream; name=a${n}.bin\r\nContent-Transfer-Encoding: base64\r\n\r\n${bytes}\r\n--b--\r\n`,
    body,
    attachment,
  };
}

test('SIGKILL in the middle of a stream of deliveries: after a restart every 250 is stored exactly once and nothing is half-stored', async (t) => {
  t.timeout(240_000);
  const dataDir = tempDir(t);
  // In the PostgreSQL lane the node's database is a throw-away PostgreSQL one (the node is killed, not the database).
  const database: Record<string, string> = onPostgres ? { MAILSTEAD_DATABASE_URL: await freshPostgresDatabase(t) } : {};
  const key = await adminKey(dataDir, database);
  let server: ServerProcess = await startServerProcess(dataDir, database);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  let http = api(server.httpPort, key);
  const domain = await http.call('POST', '/v1/create/domain', { Domain: 'crash.test' });
  t.is((await http.poll('/v1/get/domain', domain.body.task_id)).body.status, 'completed');
  const box = await http.call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Crash Box', single_bulk: 'single', Domain: 'crash.test', Params: { email_id: 'crash@crash.test', password: 0 } });
  t.is((await http.poll('/v1/get/mailbox/single', box.body.task_id)).body.status, 'completed');

  // Eight senders deliver numbered messages back to back until the server is killed under them.
  const acked = new Set<number>();
  let next = 0;
  let killed = false;
  const sender = async () => {
    const client = await smtpClient(server.smtpPort);
    try {
      while (!killed) {
        const n = next++;
        try {
          await sendOn(client, { from: 'sender@client.example', to: ['crash@crash.test'] }, message(n).raw);
          acked.add(n);
        } catch {
          return;
        }
      }
    } finally {
      client.close();
    }
  };
  const senders = Array.from({ length: 8 }, sender);
  const deadline = Date.now() + 60_000;
  while (acked.size < 150 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  killed = true;
  server.child.kill('SIGKILL');
  t.is(await server.exited, 'SIGKILL');
  await Promise.all(senders);
  t.true(acked.size >= 150, `only ${acked.size} messages acknowledged before the kill`);
  const attempted = next;

  server = await startServerProcess(dataDir, database);
  http = api(server.httpPort, key);
  // The worker resumes what was committed; wait until the listing holds every acknowledged message
  // and the ingest backlog is empty (nothing left that could add a second copy), then list once more.
  const listing = async () => {
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const r = await http.call('GET', `/v1/emails?per_page=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      all.push(...r.body.data);
      cursor = r.body.meta.next_cursor;
    } while (cursor);
    return all;
  };
  await lastCheck(async () => {
    const subjects = new Set((await listing()).map((i) => i.subject));
    return [...acked].every((n) => subjects.has(`crash ${n}`)) && (await ingestBacklog(server.httpPort)) === 0;
  }, { timeoutMs: 90_000, everyMs: 200 });
  const items = await listing();

  const seen = new Map<number, number>();
  for (const i of items) {
    const n = Number(/^crash (\d+)$/.exec(i.subject)?.[1]);
    t.true(Number.isInteger(n) && n < attempted, `unexpected subject ${i.subject}`);
    seen.set(n, (seen.get(n) ?? 0) + 1);
  }
  for (const n of acked) t.is(seen.get(n), 1, `acknowledged message ${n} is stored exactly once`);
  for (const [n, count] of seen) t.is(count, 1, `message ${n} is stored once`);
  // Stored means whole: body and attachment as sent, for acknowledged messages and for any that committed without their 250.
  for (const i of items) {
    const n = Number(/^crash (\d+)$/.exec(i.subject)![1]);
    const e = (await http.call('GET', `/v1/emails/${i.id}`)).body.data;
    const m = message(n);
    t.is(e.message_id, `<crash-${n}@client.example>`);
    t.is(e.body_text.trim(), m.body, `message ${n} body`);
    t.deepEqual(e.attachments.map((a: any) => a.size), m.attachment ? [m.attachment] : [], `message ${n} attachment`);
  }
  t.log(`${acked.size} acknowledged, ${items.length} stored, ${attempted} attempted`);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});

test('SIGHUP makes the running server reload its STARTTLS certificate; SIGTERM stops it cleanly', async (t) => {
  const dataDir = tempDir(t);
  const certFile = join(dataDir, 'cert.pem');
  const keyFile = join(dataDir, 'key.pem');
  const first = await certificate('before-hup.mailstead.test');
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const server = await startServerProcess(dataDir, { MAILSTEAD_TLS_CERT: certFile, MAILSTEAD_TLS_KEY: keyFile });
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const cn = async () => {
    const s = await rawSession(server.smtpPort);
    try {
      await s.command('EHLO client.example');
      return await peerCommonName(s);
    } finally {
      s.close();
    }
  };
  t.is(await cn(), 'before-hup.mailstead.test');
  const second = await certificate('after-hup.mailstead.test');
  writeFileSync(certFile, second.cert);
  writeFileSync(keyFile, second.key);
  server.child.kill('SIGHUP');
  t.is(await lastCheck(cn, { timeoutMs: 10_000, everyMs: 100, done: (now) => now === 'after-hup.mailstead.test' }), 'after-hup.mailstead.test');
  // The log line travels through a pipe; give it a moment.
  const logDeadline = Date.now() + 5_000;
  while (!/"tls_source":"files".*tls certificate installed/.test(server.output()) && Date.now() < logDeadline) await new Promise((r) => setTimeout(r, 50));
  t.regex(server.output(), /"tls_source":"files".*tls certificate installed/);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});
