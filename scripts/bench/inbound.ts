/**
 * Inbound acceptance: POST /v1/mail/inbound with ~5 KB messages (unique message_id each) from
 * CONNECTIONS connections for SECONDS seconds against the real server (a child process, rate
 * limits off, a fresh data dir). Reports accepted/s (200 answers), latency percentiles, and how
 * long the worker then took to store the backlog.
 *
 * Usage: node --import tsx scripts/bench/inbound.ts [--seconds=20] [--connections=32] [--main=FILE]
 *   (the server: the build when it is current, as `npm start` runs it, else src/main.ts through tsx)
 * Bounded: the load runs SECONDS, the drain at most 120 s more. Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cli, processCpuMs, serverArgs, startServer } from './email-bench-server.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const SECONDS = Number(args.get('seconds') ?? 20);
const CONNECTIONS = Number(args.get('connections') ?? 32);

const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-bench-inbound-'));
const server = await startServer(dataDir, args.get('main'));
try {
  await cli(dataDir, ['tenant', 'create', 'bench', '--plan', 'active']);
  const key = await cli(dataDir, ['key', 'create', '--tenant', 'bench', '--perms', 'read,write,inbound']);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.base + path, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return res.json() as Promise<any>;
  };
  const until = async (path: string) => {
    for (let i = 0; i < 600; i++) {
      const r = await call('GET', path);
      if (!['queued', 'running'].includes(r.status)) return r;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`${path} did not finish`);
  };
  const d = await call('POST', '/v1/create/domain', { Domain: 'bench.example' });
  await until(`/v1/get/domain?task_id=${d.task_id}`);
  const m = await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench', single_bulk: 'single', Domain: 'bench.example', Params: { email_id: 'inbox@bench.example', password: 0 } });
  await until(`/v1/get/mailbox/single?task_id=${m.task_id}`);

  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november'];
  let text = '';
  for (let i = 0; text.length < 4900; i++) text += words[(i * 7) % words.length] + (i % 13 === 12 ? '\n' : ' ');
  const encodedText = JSON.stringify(text).slice(1);
  let n = 0;
  const started = Date.now();
  const cpuBefore = processCpuMs(server.child.pid!);
  const result = await autocannon({
    url: server.base.replace(/\/api$/, ''),
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [{
      method: 'POST',
      path: '/api/v1/mail/inbound',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      // Built by concatenation around a pre-encoded body, so the load generator (sharing the
      // machine's two cores with the server) spends little CPU per request.
      setupRequest: (req) => {
        n++;
        req.body = `{"message_id":"<bench-${started}-${n}@load.example>","from_email":"load@load.example","from_name":"Load Generator",`
          + `"to_email":"inbox@bench.example","subject":"Benchmark message ${n}","received_at":"${new Date(started + n).toISOString()}",`
          + `"body_text":"${n} ${encodedText}}`;
        return req;
      },
    }],
  });
  const accepted = result['2xx'];
  const cpuAfter = processCpuMs(server.child.pid!);
  // Server CPU per accepted message during the load (storage running meanwhile included).
  const cpu = cpuBefore && cpuAfter ? {
    server_cpu_us_per_msg: Math.round(((cpuAfter.total - cpuBefore.total) * 1000) / Math.max(accepted, 1)),
    main_thread_cpu_us_per_msg: Math.round(((cpuAfter.main - cpuBefore.main) * 1000) / Math.max(accepted, 1)),
  } : {};
  // Then the backlog: how long until the worker stored every accepted message.
  const drainStart = Date.now();
  while ((await count("SELECT count(*) AS n FROM inbound WHERE status = 'queued'")) > 0 && Date.now() - drainStart < 120_000) {
    await new Promise((res) => setTimeout(res, 100));
  }
  const drainS = (Date.now() - drainStart) / 1000;
  const stored = await count('SELECT count(*) AS n FROM emails');
  console.log(JSON.stringify({
    bench: 'inbound', server: serverArgs(args.get('main')).join(' '), seconds: SECONDS, connections: CONNECTIONS, accepted, non_2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts,
    accepted_per_s: Math.round(accepted / SECONDS), latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    drain_s: Math.round(drainS * 10) / 10, stored, ...cpu,
  }));
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

/** A count read from the database file (a WAL reader does not block the server). */
async function count(query: string): Promise<number> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dataDir, 'mailstead.db'), { readonly: true });
  try {
    return (db.prepare(query).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
