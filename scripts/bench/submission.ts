/**
 * Submission throughput and login cost: SESSIONS authenticated sessions on the implicit-TLS
 * submission port (one AUTH PLAIN each, a mailbox per session) send ~5 KB messages back to back.
 *
 * Mailstead runs as `npm start` does (see email-bench-server.ts) with a temporary data dir and
 * MAILSTEAD_SUBMISSION_DAILY_LIMIT far above what a run sends; its DNS is a server in this script
 * (a worker thread) that publishes the MX of the external domain at 127.0.0.1, where a sink
 * (smtp-server, no STARTTLS) listens (MAILSTEAD_OUTBOUND_PORT, MAILSTEAD_OUTBOUND_ALLOW_PRIVATE).
 * Phases, each after WARMUP seconds of the same load:
 *  - hosted: each session sends to the next session's mailbox; acknowledged msgs/s, and the time
 *    until every acknowledged message is in its recipient's INBOX (read from the database file);
 *  - external: to an address at the sink's domain; each copy DKIM-signed by the sender's domain;
 *    msgs/s received by the sink (from the first send until it has every acknowledged message);
 *  - login: AUTH one at a time on fresh connections (its time is mostly the password hash), then
 *    SESSIONS loops of connect + TLS + EHLO + AUTH + QUIT for LOGIN_SECONDS: successful logins/s and
 *    any refused (the lock-out counts failures only, so none should be).
 * Prints one JSON line.
 *
 * Usage: node --import tsx scripts/bench/submission.ts [--seconds=10] [--warmup=2] [--sessions=10] [--login-seconds=5] [--main=FILE]
 *   [--phases=hosted,external,login] (fewer phases: a profile of one, with BENCH_NODE_ARGS="--cpu-prof")
 * Bounded: every phase has its duration and every wait a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SMTPServer } from 'smtp-server';
import { databaseFile } from '../../src/db/connection.js';
import { benchEnv, cli, processCpuMs, ROOT, serverArgs, startEnv } from './email-bench-server.js';
import { startMxDns } from './mx-dns.js';
import { LeanSmtpClient } from './smtp-client.js';
import { benchApi } from './bench-api.js';

const { values } = parseArgs({ options: { seconds: { type: 'string' }, warmup: { type: 'string' }, sessions: { type: 'string' }, 'login-seconds': { type: 'string' }, main: { type: 'string' }, phases: { type: 'string' } } });
const PHASES = new Set((values.phases ?? 'hosted,external,login').split(','));
const SECONDS = Number(values.seconds ?? 10);
const WARMUP = Number(values.warmup ?? 2);
const SESSIONS = Number(values.sessions ?? 10);
const LOGIN_SECONDS = Number(values['login-seconds'] ?? 5);
const SERIAL_LOGINS = 20;
const DOMAIN = 'sub.bench';
const REMOTE_DOMAIN = 'remote.bench';
const REMOTE = `rcpt@${REMOTE_DOMAIN}`;
const PASSWORD = 'bench-password-123';
const WAIT_MS = 180_000;

/** The remote MX: when each message (by Message-ID) arrived, and how many carried a DKIM signature of DOMAIN. */
async function startSink() {
  const arrivals = new Map<string, number>();
  let signed = 0;
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], disableReverseLookup: true, logger: false, maxClients: 1000, size: 0,
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => { if (head.length < 65_536 && !head.includes('\r\n\r\n')) head += chunk.toString('latin1'); });
      stream.on('end', () => {
        const id = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1];
        if (id) arrivals.set(id, performance.now());
        if (new RegExp(`^DKIM-Signature:[^]*?d=${DOMAIN.replace('.', '\\.')};`, 'im').test(head)) signed++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as { port: number }).port, arrivals, signed: () => signed, close: () => new Promise<void>((r) => server.close(() => r())) };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

const mailbox = (i: number) => `sender${i}@${DOMAIN}`;
const BODY = Array.from({ length: 66 }, () => 'The quick brown fox jumps over the lazy dog while the mail server keeps up. ').join('\r\n');
const messageId = (tag: string, n: number) => `<${tag}-${n}@${DOMAIN}>`;
const message = (from: string, to: string, tag: string, n: number) => Buffer.from(`From: Bench Sender <${from}>\r\nTo: ${to}\r\nSubject: ${tag} ${n}\r\nMessage-ID: ${messageId(tag, n)}\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${BODY}\r\n`, 'latin1');

/**
 * SESSIONS logged-in senders back to back for `seconds`; `to(i)` is session i's recipient. The
 * server's CPU (`cpu()`) is read once all are logged in, so the logins' password hashing is not counted.
 */
async function load(port: number, seconds: number, tag: string, to: (i: number) => string, cpu: () => number | null = () => null) {
  const acked = new Map<string, number>();
  let n = 0;
  let errors = 0;
  let firstError: string | null = null;
  const clients = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => LeanSmtpClient.openSubmission(port, 'client.example', mailbox(i), PASSWORD)));
  const cpuAtStart = cpu();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(clients.map(async ({ client }, i) => {
    while (performance.now() < end) {
      const k = n++;
      try {
        await client.send(mailbox(i), to(i), message(mailbox(i), to(i), tag, k));
        acked.set(messageId(tag, k), performance.now());
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
    client.quit();
  }));
  return { acked, errors, firstError, started, cpuAtStart, lastAck: Math.max(...acked.values()) };
}

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
const rate = (count: number, fromMs: number, toMs: number) => Math.round(count / ((toMs - fromMs) / 1000));

/** Polls `count()` every 50 ms until it reaches `wanted` (WAIT_MS at most); the count and when. */
async function until(count: () => number, wanted: number): Promise<{ got: number; at: number }> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const got = count();
    if (got >= wanted || Date.now() > deadline) return { got, at: performance.now() };
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Hosted recipients: acknowledged msgs/s and when every message was in its recipient's INBOX. */
async function hosted(port: number, db: Database.Database, cpu: () => number | null) {
  const stored = db.prepare(`SELECT count(*) AS n FROM emails WHERE folder = 'INBOX' AND subject LIKE ?`);
  const count = (tag: string) => (stored.get(`${tag} %`) as { n: number }).n;
  const to = (i: number) => mailbox((i + 1) % SESSIONS);
  if (WARMUP > 0) { const w = await load(port, WARMUP, 'hosted-warm', to); await until(() => count('hosted-warm'), w.acked.size); }
  const run = await load(port, SECONDS, 'hosted', to, cpu);
  const cpuBefore = run.cpuAtStart;
  const done = await until(() => count('hosted'), run.acked.size);
  const cpuAfter = cpu();
  return {
    acked: run.acked.size, errors: run.errors, first_error: run.firstError, stored: done.got, all_stored: done.got === run.acked.size,
    acked_per_s: rate(run.acked.size, run.started, run.lastAck), stored_per_s: rate(done.got, run.started, done.at),
    last_stored_after_last_ack_s: round((done.at - run.lastAck) / 1000, 2),
    server_cpu_us_per_msg: cpuBefore !== null && cpuAfter !== null ? Math.round(((cpuAfter - cpuBefore) * 1000) / Math.max(done.got, 1)) : null,
  };
}

/** External recipient: msgs/s received by the sink, end to end, and how many were signed. */
async function external(port: number, sink: Sink, cpu: () => number | null) {
  const arrived = (ids: Iterable<string>) => { const wanted = [...ids]; return () => wanted.filter((id) => sink.arrivals.has(id)).length; };
  if (WARMUP > 0) { const w = await load(port, WARMUP, 'external-warm', () => REMOTE); await until(arrived(w.acked.keys()), w.acked.size); }
  const signedBefore = sink.signed();
  const run = await load(port, SECONDS, 'external', () => REMOTE, cpu);
  const cpuBefore = run.cpuAtStart;
  const done = await until(arrived(run.acked.keys()), run.acked.size);
  const cpuAfter = cpu();
  const lastArrival = Math.max(...[...run.acked.keys()].map((id) => sink.arrivals.get(id) ?? 0));
  return {
    acked: run.acked.size, errors: run.errors, first_error: run.firstError, received: done.got, all_received: done.got === run.acked.size,
    acked_per_s: rate(run.acked.size, run.started, run.lastAck), received_per_s: rate(done.got, run.started, lastArrival),
    dkim_signed: sink.signed() - signedBefore,
    server_cpu_us_per_msg: cpuBefore !== null && cpuAfter !== null ? Math.round(((cpuAfter - cpuBefore) * 1000) / Math.max(done.got, 1)) : null,
  };
}

/** The cost of one AUTH (one at a time), then successful logins per second over SESSIONS connections. */
async function logins(port: number) {
  const serial: number[] = [];
  for (let i = 0; i < SERIAL_LOGINS; i++) {
    const { client, authMs } = await LeanSmtpClient.openSubmission(port, 'client.example', mailbox(i % SESSIONS), PASSWORD);
    serial.push(authMs);
    client.quit();
  }
  serial.sort((a, b) => a - b);
  let ok = 0;
  let refused = 0;
  let firstRefusal: string | null = null;
  const authTimes: number[] = [];
  const started = performance.now();
  const end = started + LOGIN_SECONDS * 1000;
  await Promise.all(Array.from({ length: SESSIONS }, async (_, i) => {
    while (performance.now() < end) {
      try {
        const { client, authMs } = await LeanSmtpClient.openSubmission(port, 'client.example', mailbox(i), PASSWORD);
        ok++;
        authTimes.push(authMs);
        client.quit();
      } catch (err) {
        refused++;
        firstRefusal ??= String(err);
      }
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  authTimes.sort((a, b) => a - b);
  const pct = (xs: number[], p: number) => round(xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? Number.NaN);
  return {
    auth_ms_alone: { p50: pct(serial, 0.5), min: round(serial[0] ?? Number.NaN), max: round(serial.at(-1) ?? Number.NaN), n: serial.length },
    logins_per_s: Math.round(ok / elapsed), logins: ok, refused, first_refusal: firstRefusal,
    auth_ms_under_load: { p50: pct(authTimes, 0.5), p99: pct(authTimes, 0.99) },
  };
}

/** Mailstead as npm start runs it, with a tenant, DOMAIN and a mailbox per session. */
async function mailstead(sink: Sink, dns: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-submission-bench-'));
  const env = {
    ...process.env, ...startEnv(), ...benchEnv(dataDir), MAILSTEAD_DNS_SERVERS: dns, MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0',
    MAILSTEAD_SUBMISSION_DAILY_LIMIT: '999999999', MAILSTEAD_OUTBOUND_PORT: String(sink.port), MAILSTEAD_OUTBOUND_ALLOW_PRIVATE: 'true', MAILSTEAD_LOG_LEVEL: 'info',
  };
  const args = serverArgs(values.main);
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let db: Database.Database | null = null;
  try {
    const ports = await new Promise<{ http: number; submissions: number }>((resolve, reject) => {
      let out = '';
      let started = false;
      const timer = setTimeout(() => reject(new Error('mailstead did not start')), 60_000);
      // BENCH_SERVER_OUT=FILE keeps the server's stdout (its log) there; otherwise it is read and dropped.
      child.stdout!.on('data', (d) => {
        if (process.env.BENCH_SERVER_OUT) appendFileSync(process.env.BENCH_SERVER_OUT, d);
        if (started) return;
        out += d;
        const http = /"http_port":(\d+)/.exec(out);
        const submissions = /"submissions_port":(\d+)/.exec(out);
        if (http && submissions) { started = true; clearTimeout(timer); out = ''; resolve({ http: Number(http[1]), submissions: Number(submissions[1]) }); }
      });
      child.once('exit', (code) => reject(new Error(`mailstead exited ${code}`)));
    });
    await cli(dataDir, ['tenant', 'create', 'bench', '--plan', 'active']);
    const key = await cli(dataDir, ['key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
    const { call, task } = benchApi(ports.http, key);
    await task('/v1/get/domain', await call('POST', '/v1/create/domain', { Domain: DOMAIN }));
    for (let i = 0; i < SESSIONS; i++) {
      await task('/v1/get/mailbox/single', await call('POST', '/v1/create/mailbox/single', { Email_fullname: `Sender ${i}`, single_bulk: 'single', Domain: DOMAIN, Params: { email_id: mailbox(i), password: PASSWORD } }));
    }
    db = new Database(databaseFile(dataDir), { readonly: true, fileMustExist: true });
    const cpu = () => processCpuMs(child.pid!)?.total ?? null;
    const hostedResult = PHASES.has('hosted') ? await hosted(ports.submissions, db, cpu) : null;
    const externalResult = PHASES.has('external') ? await external(ports.submissions, sink, cpu) : null;
    const loginResult = PHASES.has('login') ? await logins(ports.submissions) : null;
    return { server: args.join(' '), hosted: hostedResult, external: externalResult, login: loginResult };
  } finally {
    db?.close();
    child.kill('SIGTERM');
    await new Promise((res) => { child.once('exit', res); setTimeout(res, 15_000); });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  // The host is shared: its load average says how far rates can be trusted.
  const loadBefore = loadavg()[0];
  const dns = await startMxDns(REMOTE_DOMAIN);
  const sink = await startSink();
  try {
    const result = await mailstead(sink, dns.server);
    console.log(JSON.stringify({
      bench: 'submission', sessions: SESSIONS, seconds: SECONDS, warmup: WARMUP, message_bytes: message(mailbox(0), REMOTE, 'x', 0).length,
      ...result, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) },
    }));
  } finally {
    await sink.close();
    await dns.stop();
  }
}

await main();
