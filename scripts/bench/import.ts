/**
 * Import and export throughput (issue 45): a Debian Dovecot (dovecot.ts) holding N mixed messages
 * (default 10,000; IMPORT_BENCH_N) in four folders, written into its Maildir; then, three times,
 * `mbsync` (Debian isync) pulling the whole account into a fresh local Maildir (the ceiling of a
 * pull) and our IMAP import of the same account into a fresh mailbox, both over implicit TLS on
 * loopback; and the export of the imported mailbox as a Maildir tar. Prints medians as JSON:
 * messages/s of each, the ratio (target >= 0.5), RSS growth of this process during our import
 * (target < 100 MB), export messages/s (target >= 1,000).
 *
 *   node --import tsx scripts/bench/import.ts
 *
 * Needs `dovecot` (dovecot-imapd), `mbsync` (isync) and openssl. Every wait has a deadline.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { quietDns } from '../../test/helpers/dns.js';
import { DOVECOT_PASSWORD, DOVECOT_USER, startDovecot, writeMaildir } from './dovecot.js';

const run = promisify(execFile);
const N = Number(process.env.IMPORT_BENCH_N ?? 10_000);
const RUNS = 3;
const FOLDERS = ['Archive', 'Sent', 'Lists'];

function message(i: number): Buffer {
  const head = [`From: Sender ${i} <s${i}@old.example>`, 'To: owner@old.example', `Date: Mon, 1 Jan 2024 12:00:00 +0000`, `Message-ID: <bench${i}@old.example>`, `Subject: message ${i}`, 'MIME-Version: 1.0'];
  if (i % 4 === 2) {
    const data = Buffer.alloc(20_000 + (i % 50) * 100, i & 0xff).toString('base64').replace(/.{76}/g, '$&\r\n');
    return Buffer.from([...head, 'Content-Type: multipart/mixed; boundary="b"', '', '--b', 'Content-Type: text/plain', '', `see ${i}`, '--b',
      'Content-Type: application/octet-stream; name="f.bin"', 'Content-Transfer-Encoding: base64', '', data, '--b--', ''].join('\r\n'));
  }
  return Buffer.from([...head, 'Content-Type: text/plain; charset=utf-8', '', `Body ${i}. `.repeat(40 + (i % 30)), ''].join('\r\n'));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'mailstead-import-bench-'));
const messages = Array.from({ length: N }, (_, i) => message(i));
// INBOX gets 55%, each other folder 15%: written as Maildir++ folders beside cur/.
const share = Math.floor(N * 0.15);
writeMaildir(dir, messages.slice(0, N - share * FOLDERS.length));
FOLDERS.forEach((f, k) => {
  const root = join(dir, 'home', 'Maildir', `.${f}`);
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(root, sub), { recursive: true });
  const start = N - share * (FOLDERS.length - k);
  messages.slice(start, start + share).forEach((m, i) => writeFileSync(join(root, 'cur', `${1700000000 + i}.M${start + i}P1.bench:2,S`), m));
});
const dovecot = await startDovecot(dir);
const cert = join(dir, 'cert.pem');

async function mbsync(target: string): Promise<number> {
  mkdirSync(join(target, 'mail'), { recursive: true });
  mkdirSync(join(target, 'state'), { recursive: true });
  writeFileSync(join(target, 'rc'), [
    'IMAPAccount old', 'Host 127.0.0.1', `Port ${dovecot.port}`, `User ${DOVECOT_USER}`, `Pass ${DOVECOT_PASSWORD}`, 'SSLType IMAPS',
    'SystemCertificates no', `CertificateFile ${cert}`, '', 'IMAPStore far', 'Account old', '',
    'MaildirStore near', `Path ${target}/mail/`, `Inbox ${target}/mail/INBOX`, 'SubFolders Verbatim', '',
    'Channel all', 'Far :far:', 'Near :near:', 'Patterns *', 'Create Near', 'Sync Pull', `SyncState ${target}/state/`, '',
  ].join('\n'));
  const t0 = performance.now();
  await run('mbsync', ['-c', join(target, 'rc'), 'all'], { timeout: 30 * 60_000 });
  return performance.now() - t0;
}

const dataDir = join(dir, 'data');
const config = loadConfig({
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0',
  MAILSTEAD_LOG_LEVEL: 'silent', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0', MAILSTEAD_HOSTNAME: 'bench.mailstead.test',
  MAILSTEAD_DNS_SERVERS: await quietDns(), MAILSTEAD_IMPORT_ALLOW_PRIVATE: 'true',
});
const app = await createApp({ config });
const { httpPort } = await app.start();
const base = `http://127.0.0.1:${httpPort}/api`;
await app.tenants.createTenant('bench', { plan: true, admin: false });
const key = await app.tenants.createKey('bench', 'read,write');
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return (await res.json()) as any;
};
const wait = async (poll: string, taskId: number, timeoutMs = 30 * 60_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call('GET', `${poll}?task_id=${taskId}`);
    if (r.status === 'completed') return r;
    if (r.status === 'failed' || Date.now() > deadline) throw new Error(`${poll}: ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
};
await wait('/v1/get/domain', (await call('POST', '/v1/create/domain', { Domain: 'bench.example' })).task_id);

// Dovecot indexes the Maildir on the first SELECT: one unmeasured pull first.
await mbsync(join(dir, 'warm'));

const ours: number[] = [];
const theirs: number[] = [];
const rssGrowth: number[] = [];
let lastBox = '';
for (let r = 0; r < RUNS; r++) {
  theirs.push(N / ((await mbsync(join(dir, `mbsync${r}`))) / 1000));
  lastBox = `box${r}@bench.example`;
  await wait('/v1/get/mailbox/single', (await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench', single_bulk: 'single', Domain: 'bench.example', Params: { email_id: lastBox, password: 0 } })).task_id);
  await app.db.updateTable('mailboxes').set({ quota_mb: 0 }).where('address', '=', lastBox).execute();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 100);
  const t0 = performance.now();
  const started = await call('POST', `/v1/mailboxes/${lastBox}/import`, { source: 'imap', host: '127.0.0.1', port: dovecot.port, security: 'tls', tls_verify: false, username: DOVECOT_USER, password: DOVECOT_PASSWORD });
  const done = await wait('/v1/get/import', started.task_id);
  const ms = performance.now() - t0;
  clearInterval(sampler);
  if (done.results.messages_imported !== N) throw new Error(`imported ${done.results.messages_imported} of ${N}`);
  ours.push(N / (ms / 1000));
  rssGrowth.push((peak - rss0) / 1024 / 1024);
}

const exportRates: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/mailboxes/${lastBox}/export?format=maildir`, { headers: { authorization: `Bearer ${key}` } });
  let bytes = 0;
  for await (const c of res.body!) bytes += (c as Uint8Array).length;
  exportRates.push(N / ((performance.now() - t0) / 1000));
  if (bytes === 0) throw new Error('empty export');
}

const result = {
  messages: N,
  import_messages_per_s: Math.round(median(ours)),
  mbsync_messages_per_s: Math.round(median(theirs)),
  ratio_to_mbsync: Math.round((median(ours) / median(theirs)) * 100) / 100,
  import_rss_growth_mb: Math.round(median(rssGrowth)),
  export_maildir_messages_per_s: Math.round(median(exportRates)),
  runs: { import: ours.map(Math.round), mbsync: theirs.map(Math.round), export: exportRates.map(Math.round) },
};
console.log(JSON.stringify(result));
await app.stop();
await dovecot.stop();
rmSync(dir, { recursive: true, force: true });
