/**
 * Inbox reading through the real API with auth, against a data dir seeded by seed-emails.ts: the
 * server runs as a child process (rate limits off), autocannon drives CONNECTIONS connections for
 * SECONDS seconds per scenario:
 *   first   GET /v1/emails?per_page=25
 *   deep    GET /v1/emails?per_page=25&cursor=<a random position anywhere in the mailbox history>
 *   search  GET /v1/emails?per_page=25&q=zephyrine   (the word is in 1 % of the seeded mail)
 *   sync    GET /v1/emails/sync?since=<a random time in the history>&per_page=25
 * Reports req/s and latency per scenario, and the database bytes per stored email.
 *
 * Usage: node --import tsx scripts/bench/read.ts [DIR] [--seconds=10] [--connections=50] [--emails=N]
 * Without DIR, seeds a temporary dir with N emails first (default 20,000) and removes it after.
 * Bounded: four scenarios of SECONDS each. Prints one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { encodeListCursor } from '../../src/emails/cursor.js';
import { ROOT, startServer } from './email-bench-server.js';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const args = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=') as [string, string]));
const SECONDS = Number(args.get('seconds') ?? 10);
const CONNECTIONS = Number(args.get('connections') ?? 50);
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

const server = await startServer(dataDir);
const results: Record<string, unknown> = {};
try {
  const scenarios: Array<[string, () => string]> = [
    ['first_page', () => '/api/v1/emails?per_page=25'],
    ['deep_cursor', () => `/api/v1/emails?per_page=25&cursor=${pick(cursors)}`],
    ['search', () => '/api/v1/emails?per_page=25&q=zephyrine'],
    ['sync', () => `/api/v1/emails/sync?per_page=25&since=${pick(sinces)}`],
  ];
  for (const [name, path] of scenarios) {
    const check = await fetch(server.base.replace(/\/api$/, '') + path(), { headers: { authorization: `Bearer ${key}` } });
    const body = await check.json() as { data?: unknown[] };
    if (check.status !== 200 || !body.data?.length) throw new Error(`${name}: ${check.status} ${JSON.stringify(body).slice(0, 200)}`);
    const r = await autocannon({
      url: server.base.replace(/\/api$/, ''), connections: CONNECTIONS, duration: SECONDS,
      requests: [{ method: 'GET', headers: { authorization: `Bearer ${key}` }, setupRequest: (req) => ({ ...req, path: path() }) }],
    });
    results[name] = { req_per_s: Math.round(r['2xx'] / SECONDS), non_2xx: r.non2xx, errors: r.errors, latency_ms: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max } };
  }
} finally {
  await server.stop();
}
const bytes = statSync(join(dataDir, 'mailstead.db')).size;
console.log(JSON.stringify({ bench: 'read', emails, seconds: SECONDS, connections: CONNECTIONS, ...results, db_bytes_per_email: Math.round(bytes / Math.max(emails, 1)) }));
if (temporary) rmSync(dataDir, { recursive: true, force: true });
