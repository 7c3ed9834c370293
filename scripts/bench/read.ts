/**
 * Inbox reading through the real API with auth, against a data dir seeded by seed-emails.ts: the
 * server runs as a child process (rate limits off), autocannon drives CONNECTIONS connections for
 * SECONDS seconds per scenario, after 2 unmeasured seconds of the same load:
 *   first   GET /v1/emails?per_page=25
 *   deep    GET /v1/emails?per_page=25&cursor=<a random position anywhere in the mailbox history>
 *   search  GET /v1/emails?per_page=25&q=zephyrine   (the word is in 1 % of the seeded mail)
 *   sync    GET /v1/emails/sync?since=<a random time in the history>&per_page=25
 * Reports req/s and latency per scenario; the server's CPU time per request (all threads, its
 * system part, and the main thread alone; from /proc on Linux, steadier than req/s on a shared
 * machine); and the database bytes per stored email.
 *
 * The server is the build (`npm run build`: dist/src/main.js, what `npm start` runs, with reader
 * threads) when it is newer than every source file, else the sources through tsx (reads on the
 * main thread); --main=FILE picks another entry.
 *
 * Usage: node --import tsx scripts/bench/read.ts [DIR] [--seconds=10] [--connections=50] [--emails=N]
 *          [--only=first_page,deep_cursor,search,sync] [--main=FILE] [--database=sqlite|postgres|both]
 * Without DIR, seeds a temporary dir with N emails first (default 20,000) and removes it after.
 * --database=postgres copies the seeded database into a fresh one on a durable local PostgreSQL
 * cluster (copy-to-postgres.ts, bench-postgres.ts) and runs the server on it (MAILSTEAD_DATABASE_URL,
 * an empty data dir of its own); `both` runs SQLite mode, then PostgreSQL mode on the same mail,
 * and prints them side by side with PostgreSQL's req/s as a fraction of SQLite's.
 * Bounded: four scenarios of SECONDS each per mode. Prints one JSON line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { encodeListCursor } from '../../src/emails/cursor.js';
import { benchPostgres, databaseOption, modesOf, stopBenchPostgres, type BenchPostgres } from './bench-postgres.js';
import { copyToPostgres } from './copy-to-postgres.js';
import { benchEnv, ROOT, serverArgs, startEnv } from './email-bench-server.js';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const args = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=') as [string, string]));
const SECONDS = Number(args.get('seconds') ?? 10);
const CONNECTIONS = Number(args.get('connections') ?? 50);
const ONLY = args.get('only')?.split(',');
const MAIN = serverArgs(args.get('main'));
const DATABASE = databaseOption(args.get('database'));

const temporary = positional.length === 0;
const dataDir = positional[0] ?? mkdtempSync(join(tmpdir(), 'mailstead-bench-read-'));

if (temporary) {
  const seeded = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/seed-emails.ts', dataDir, `--emails=${args.get('emails') ?? 20_000}`], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (seeded.status !== 0) throw new Error('seeding failed');
}
const key = readFileSync(join(dataDir, 'bench.key'), 'utf8').trim();

// Positions to page from, and times to sync from, sampled from the data itself.
const db = new Database(join(dataDir, 'mailstead.db'), { readonly: true });
const emails = (db.prepare('SELECT count(*) AS n FROM emails').get() as { n: number }).n;
const maxId = (db.prepare('SELECT max(id) AS m FROM emails').get() as { m: number }).m;
const wanted = Array.from({ length: 2000 }, () => 1 + Math.floor(Math.random() * maxId));
const sample = db.prepare(`SELECT id, received_at, updated_seq FROM emails WHERE id IN (${wanted.join(',')})`).all() as Array<{ id: number; received_at: number; updated_seq: number }>;
db.close();
const cursors = sample.map((r) => encodeListCursor({ direction: 'next', receivedAt: r.received_at, id: r.id }));
const sinces = sample.map((r) => new Date(Math.floor(r.updated_seq / 1000)).toISOString());
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];

/** CPU milliseconds the server has used so far: all threads, their system part, and the main thread alone (null without /proc). */
function cpuMs(pid: number): { total: number; system: number; main: number } | null {
  // utime and stime, fields 14 and 15 of stat (12 and 13 after the "pid (comm) " prefix), in ticks of 10 ms.
  const ticks = (file: string) => readFileSync(file, 'utf8').replace(/^.*\) /s, '').split(' ').slice(11, 13).map((x) => Number(x) * 10);
  try {
    const [user, system] = ticks(`/proc/${pid}/stat`);
    const [mainUser, mainSystem] = ticks(`/proc/${pid}/task/${pid}/stat`);
    return { total: user + system, system, main: mainUser + mainSystem };
  } catch {
    return null;
  }
}

/** Starts the server on `dir` (and PostgreSQL's `databaseUrl`) and resolves once it logged its HTTP port (60 s at most). */
function startServer(dir: string, databaseUrl: string | null): Promise<{ pid: number; base: string; stop(): Promise<void> }> {
  const env = { ...process.env, ...startEnv(), ...benchEnv(dir), ...(databaseUrl ? { MAILSTEAD_DATABASE_URL: databaseUrl } : {}) };
  const child = spawn(process.execPath, MAIN, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out.slice(-500)}`)); }, 60_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /"http_port":(\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({
        pid: child.pid!, base: `http://127.0.0.1:${m[1]}`,
        async stop() { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]); child.kill('SIGKILL'); },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${out.slice(-500)}`)); });
  });
}

/** Seconds of unmeasured load before each scenario. */
const WARMUP_SECONDS = 2;

/** The four scenarios against a running server; CPU per request includes PostgreSQL's processes in PostgreSQL mode. */
async function scenarios(server: { pid: number; base: string }, database: BenchPostgres | null): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  const list: Array<[string, () => string]> = [
    ['first_page', () => '/api/v1/emails?per_page=25'],
    ['deep_cursor', () => `/api/v1/emails?per_page=25&cursor=${pick(cursors)}`],
    ['search', () => '/api/v1/emails?per_page=25&q=zephyrine'],
    ['sync', () => `/api/v1/emails/sync?per_page=25&since=${pick(sinces)}`],
  ];
  for (const [name, path] of list) {
    if (ONLY && !ONLY.includes(name)) continue;
    const check = await fetch(server.base + path(), { headers: { authorization: `Bearer ${key}` } });
    const body = await check.json() as { data?: unknown[] };
    if (check.status !== 200 || !body.data?.length) throw new Error(`${name}: ${check.status} ${JSON.stringify(body).slice(0, 200)}`);
    // Unmeasured warm-up: the figures are the steady state (JIT-compiled code, reader threads
    // running: they start once reads exceed 200/s), not the server's first second under load.
    await autocannon({
      url: server.base, connections: CONNECTIONS, duration: WARMUP_SECONDS,
      requests: [{ method: 'GET', headers: { authorization: `Bearer ${key}` }, setupRequest: (req) => ({ ...req, path: path() }) }],
    });
    const cpuBefore = cpuMs(server.pid);
    const pgBefore = database?.cpuMs() ?? null;
    const r = await autocannon({
      url: server.base, connections: CONNECTIONS, duration: SECONDS,
      requests: [{ method: 'GET', headers: { authorization: `Bearer ${key}` }, setupRequest: (req) => ({ ...req, path: path() }) }],
    });
    const cpuAfter = cpuMs(server.pid);
    const pgAfter = database?.cpuMs() ?? null;
    const perReq = (ms: number) => Math.round((ms * 1000) / Math.max(r['2xx'], 1));
    const cpu = cpuBefore === null || cpuAfter === null ? {} : {
      server_cpu_us_per_req: perReq(cpuAfter.total - cpuBefore.total),
      server_sys_us_per_req: perReq(cpuAfter.system - cpuBefore.system),
      main_thread_cpu_us_per_req: perReq(cpuAfter.main - cpuBefore.main),
      ...(pgBefore !== null && pgAfter !== null ? { postgres_cpu_us_per_req: perReq(pgAfter - pgBefore) } : {}),
    };
    results[name] = { req_per_s: Math.round(r['2xx'] / SECONDS), non_2xx: r.non2xx, errors: r.errors, latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max }, ...cpu };
  }
  return results;
}

/** One mode: SQLite on the seeded dir, or PostgreSQL on a copy of it; its figures and database bytes per email. */
async function runMode(mode: 'sqlite' | 'postgres'): Promise<Record<string, unknown>> {
  const loadBefore = loadavg()[0];
  if (mode === 'sqlite') {
    const server = await startServer(dataDir, null);
    let results;
    try {
      results = await scenarios(server, null);
    } finally {
      await server.stop();
    }
    const bytes = statSync(join(dataDir, 'mailstead.db')).size;
    return { database: 'sqlite', ...results, db_bytes_per_email: Math.round(bytes / Math.max(emails, 1)), load_average: { before: loadBefore, after: loadavg()[0] } };
  }
  const database = await benchPostgres();
  const serverDir = mkdtempSync(join(tmpdir(), 'mailstead-bench-read-pg-'));
  try {
    const copyStarted = performance.now();
    const copied = await copyToPostgres(join(dataDir, 'mailstead.db'), database.url);
    const copySeconds = Math.round((performance.now() - copyStarted) / 100) / 10;
    process.stderr.write(`copied to PostgreSQL in ${copySeconds} s: ${JSON.stringify(copied)}\n`);
    const server = await startServer(serverDir, database.url);
    let results;
    try {
      results = await scenarios(server, database);
    } finally {
      await server.stop();
    }
    const bytes = await database.size();
    return { database: 'postgres', ...results, db_bytes_per_email: Math.round(bytes / Math.max(emails, 1)), copy_seconds: copySeconds, load_average: { before: loadBefore, after: loadavg()[0] } };
  } finally {
    rmSync(serverDir, { recursive: true, force: true });
    await database.drop().catch(() => undefined);
  }
}

/** PostgreSQL's req/s as a fraction of SQLite's, per scenario (issue 36 asks for at least 0.5). */
function ratios(sqlite: Record<string, unknown>, postgres: Record<string, unknown>): Record<string, number> {
  const rate = (r: unknown) => (r as { req_per_s?: number } | undefined)?.req_per_s;
  const out: Record<string, number> = {};
  for (const name of ['first_page', 'deep_cursor', 'search', 'sync']) {
    const a = rate(sqlite[name]);
    const b = rate(postgres[name]);
    if (a && b !== undefined) out[name] = Math.round((b / a) * 100) / 100;
  }
  return out;
}

const head = { bench: 'read', server: MAIN.join(' '), emails, seconds: SECONDS, connections: CONNECTIONS };
try {
  if (DATABASE === 'both') {
    const sqlite = await runMode('sqlite');
    // A PostgreSQL mode that fails still leaves SQLite's figures printed.
    const postgres = await runMode('postgres').catch((err: Error) => ({ database: 'postgres', error: err.message.slice(0, 500) }));
    console.log(JSON.stringify({ ...head, database: 'both', sqlite, postgres, postgres_over_sqlite: ratios(sqlite, postgres) }));
  } else {
    const [mode] = modesOf(DATABASE);
    console.log(JSON.stringify({ ...head, ...(await runMode(mode)) }));
  }
} finally {
  stopBenchPostgres();
  if (temporary) rmSync(dataDir, { recursive: true, force: true });
}
