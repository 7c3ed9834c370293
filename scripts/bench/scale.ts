/**
 * Scale (issue 47): the same measurements on an empty store and on a store whose one mailbox
 * already holds --seed messages (200,000 by default, written by scale-seed.ts through the storage
 * batch's own writer), on SQLite, PostgreSQL or both. Per store, against the server as `npm start`
 * runs it (a child process; email-bench-server.ts):
 * 1. SMTP ingest: CONNECTIONS sessions send ~5 KB messages (smtp-load.ts) for SECONDS; acknowledged
 *    msgs/s, then end to end (until the mailbox holds them all, counted in the database).
 * 2. API ingest: POST /v1/mail/inbound (~5 KB) from CONNECTIONS connections for SECONDS; the same two rates.
 * 3. Reads of the mailbox, each the median of several: the REST list (first page, and a page at a
 *    cursor 250 messages deep, 50 a page), get of the newest 200 one by one, sync of everything the
 *    two phases delivered (pages of 100); IMAP SELECT INBOX and the header sync of its newest 1,000
 *    messages (UID FETCH FLAGS INTERNALDATE RFC822.SIZE ENVELOPE).
 * imap_select is the median of three SELECTs on one connection; imap_select_first the first, which
 * reads the folder (later ones catch a kept list up: emails/folders/snapshots.ts).
 * The ratios seeded/empty close the line (targets: rates >= 0.8, reads <= 1.5).
 *
 * Usage: node --import tsx scripts/bench/scale.ts [--database=sqlite|postgres|both] [--seed=200000] [--seconds=10] [--connections=10]
 * Bounded: each load runs SECONDS, each wait for storage at most 300 s. Prints one JSON line.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { benchPostgres, databaseOption, modesOf, stopBenchPostgres } from './bench-postgres.js';
import { benchEnv, ROOT, serverArgs, startEnv } from './email-bench-server.js';
import { RawImap } from './imap-client.js';
import { PASSWORD, seedStore } from './scale-seed.js';
import { load, RCPT } from './smtp-load.js';

const { values } = parseArgs({ options: { database: { type: 'string' }, seed: { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } } });
const DATABASE = databaseOption(values.database);
const SEED = Number(values.seed ?? 200_000);
const SECONDS = Number(values.seconds ?? 10);
const CONNECTIONS = Number(values.connections ?? 10);
const DRAIN_LIMIT_MS = 300_000;

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return Math.round(s[Math.floor(s.length / 2)] * 100) / 100; };
const timed = async (fn: () => Promise<unknown>) => { const t = performance.now(); await fn(); return performance.now() - t; };

interface Server { base: string; smtp: number; imap: number; stop(): Promise<void> }

/** Starts the server on `dir` (and `url`) and reads its ports from the log. */
function startServer(dir: string, url: string | null): Promise<Server> {
  const env = { ...process.env, ...startEnv(), ...benchEnv(dir), MAILSTEAD_LOG_LEVEL: 'info', ...(url ? { MAILSTEAD_DATABASE_URL: url } : {}) };
  const child = spawn(process.execPath, serverArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out.slice(-500)}`)); }, 120_000);
    const onData = (d: Buffer) => {
      out += d;
      const port = (name: string) => Number(new RegExp(`"${name}":(\\d+)`).exec(out)?.[1] ?? 0);
      if (!port('http_port') || !port('smtp_port') || !port('imap_port')) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({
        base: `http://127.0.0.1:${port('http_port')}/api`, smtp: port('smtp_port'), imap: port('imap_port'),
        async stop() { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]); child.kill('SIGKILL'); },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${out.slice(-500)}`)); });
  });
}

/** Counts the mailbox's stored messages straight from the database (a reader that does not block the server). */
function mailboxCounter(dir: string, url: string | null, mailboxId: number) {
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    return { count: async () => Number((await pool.query('SELECT count(*) AS n FROM emails WHERE mailbox_id = $1', [mailboxId])).rows[0].n), close: () => pool.end() };
  }
  return {
    async count() {
      const db = new Database(join(dir, 'mailstead.db'), { readonly: true });
      try { return (db.prepare('SELECT count(*) AS n FROM emails WHERE mailbox_id = ?').get(mailboxId) as { n: number }).n; } finally { db.close(); }
    },
    close: async () => undefined,
  };
}

/** Waits until the mailbox holds `target` messages; the monotonic time it did (or null past the limit). */
async function storedBy(count: () => Promise<number>, target: number): Promise<number | null> {
  const deadline = performance.now() + DRAIN_LIMIT_MS;
  while (performance.now() < deadline) {
    if ((await count()) >= target) return performance.now();
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

/** The three phases on one store. */
async function measure(mode: 'sqlite' | 'postgres', seeded: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'mailstead-bench-scale-'));
  const database = mode === 'postgres' ? await benchPostgres() : null;
  const url = database?.url ?? null;
  try {
    const seed = await seedStore(dir, url, seeded ? SEED : 0);
    const server = await startServer(dir, url);
    const counter = mailboxCounter(dir, url, seed.mailboxId);
    const get = async (path: string) => {
      const r = await fetch(server.base + path, { headers: { authorization: `Bearer ${seed.key}` } });
      if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
      return r.json() as Promise<any>;
    };
    try {
      const since = new Date().toISOString();
      // Warm-up (JIT, parser threads), stored before anything is measured.
      let expected = (await counter.count()) + (await load({ ports: [server.smtp], connections: CONNECTIONS, client: 'lean', seconds: 2, tag: 'warm', attachment: null })).acked;
      await storedBy(counter.count, expected);

      const smtp = await load({ ports: [server.smtp], connections: CONNECTIONS, client: 'lean', seconds: SECONDS, tag: 'scale', attachment: null });
      expected += smtp.acked;
      const smtpDone = await storedBy(counter.count, expected);
      const smtpResult = {
        acked: smtp.acked, acked_per_s: smtp.rate, p99_ms: smtp.p99,
        end_to_end_per_s: smtpDone === null ? null : Math.round(smtp.acked / ((smtpDone - smtp.started) / 1000)),
      };

      let n = 0;
      const text = JSON.stringify('The quick brown fox jumps over the lazy dog while the mail server keeps up. '.repeat(66)).slice(1, -1);
      const apiStarted = performance.now();
      const api = await autocannon({
        url: server.base.replace(/\/api$/, ''), connections: CONNECTIONS, duration: SECONDS,
        requests: [{
          method: 'POST', path: '/api/v1/mail/inbound', headers: { authorization: `Bearer ${seed.key}`, 'content-type': 'application/json' },
          setupRequest: (req) => {
            n++;
            req.body = `{"message_id":"<scale-${n}@api.example>","from_email":"api@api.example","to_email":"${RCPT}","subject":"API ${n}","received_at":"${new Date().toISOString()}","body_text":"${n} ${text}"}`;
            return req;
          },
        }],
      });
      expected += api['2xx'];
      const apiDone = await storedBy(counter.count, expected);
      const apiResult = {
        acked: api['2xx'], non_2xx: api.non2xx, acked_per_s: Math.round(api['2xx'] / SECONDS),
        end_to_end_per_s: apiDone === null ? null : Math.round(api['2xx'] / ((apiDone - apiStarted) / 1000)),
      };

      // Reads of the mailbox.
      const box = `mailbox_id=${seed.mailboxId}`;
      const first = await get(`/v1/emails?${box}&per_page=50`);
      let cursor: string = first.meta.next_cursor;
      for (let i = 0; i < 4; i++) cursor = (await get(`/v1/emails?${box}&per_page=50&cursor=${encodeURIComponent(cursor)}`)).meta.next_cursor;
      const firstMs: number[] = [];
      const deepMs: number[] = [];
      for (let i = 0; i < 30; i++) {
        firstMs.push(await timed(() => get(`/v1/emails?${box}&per_page=50`)));
        deepMs.push(await timed(() => get(`/v1/emails?${box}&per_page=50&cursor=${encodeURIComponent(cursor)}`)));
      }
      const ids: number[] = [];
      for (let c: string | null = null; ids.length < 200;) {
        const page: any = await get(`/v1/emails?${box}&per_page=100${c ? `&cursor=${encodeURIComponent(c)}` : ''}`);
        ids.push(...page.data.map((e: { id: number }) => e.id));
        c = page.meta.next_cursor;
        if (!c) break;
      }
      const getMs = await timed(async () => { for (const id of ids) await get(`/v1/emails/${id}`); });
      const syncMs: number[] = [];
      let synced = 0;
      for (let i = 0; i < 3; i++) {
        synced = 0;
        syncMs.push(await timed(async () => {
          for (let c: string | null = null, more = true; more;) {
            const page: any = await get(`/v1/emails/sync?${box}&per_page=100&since=${encodeURIComponent(since)}${c ? `&cursor=${encodeURIComponent(c)}` : ''}`);
            synced += page.data.length;
            c = page.meta.next_cursor;
            more = page.data.length > 0 && c !== null;
          }
        }));
      }
      const imap = await RawImap.open(server.imap);
      await imap.cmd(`LOGIN "${RCPT}" "${PASSWORD}"`);
      const selectMs: number[] = [];
      const fetchMs: number[] = [];
      let uidnext = 0;
      for (let i = 0; i < 3; i++) {
        let selected = '';
        selectMs.push(await timed(async () => { selected = await imap.cmd('SELECT INBOX'); }));
        uidnext = Number(/UIDNEXT (\d+)/.exec(selected)?.[1] ?? 1);
        fetchMs.push(await timed(() => imap.cmd(`UID FETCH ${Math.max(1, uidnext - 1000)}:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)`)));
      }
      await imap.cmd('LOGOUT').catch(() => undefined);
      return {
        seeded: seeded ? SEED : 0, seed_s: seed.seconds, smtp: smtpResult, api: apiResult,
        reads_ms: {
          list_first: median(firstMs), list_deep: median(deepMs), get_200: Math.round(getMs), sync_all_new: median(syncMs), synced,
          imap_select: median(selectMs), imap_select_first: Math.round(selectMs[0] * 100) / 100, imap_header_sync_1000: median(fetchMs),
        },
      };
    } finally {
      await counter.close();
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}

/** seeded/empty of each figure (rates: higher is better; times: lower is better). */
function ratios(empty: Awaited<ReturnType<typeof measure>>, full: Awaited<ReturnType<typeof measure>>) {
  const r = (a: number | null, b: number | null) => (a && b ? Math.round((b / a) * 100) / 100 : null);
  const reads = Object.fromEntries(Object.entries(full.reads_ms).filter(([k]) => k !== 'synced')
    .map(([k, v]) => [k, r((empty.reads_ms as Record<string, number>)[k], v)]));
  return {
    smtp_acked: r(empty.smtp.acked_per_s, full.smtp.acked_per_s), smtp_end_to_end: r(empty.smtp.end_to_end_per_s, full.smtp.end_to_end_per_s),
    api_acked: r(empty.api.acked_per_s, full.api.acked_per_s), api_end_to_end: r(empty.api.end_to_end_per_s, full.api.end_to_end_per_s),
    reads,
  };
}

const out: Record<string, unknown> = { bench: 'scale', seed: SEED, seconds: SECONDS, connections: CONNECTIONS, server: serverArgs().join(' ') };
try {
  for (const mode of modesOf(DATABASE)) {
    const empty = await measure(mode, false);
    const full = await measure(mode, true);
    out[mode] = { empty, seeded: full, ratio: ratios(empty, full) };
  }
} finally {
  stopBenchPostgres();
}
console.log(JSON.stringify(out));
