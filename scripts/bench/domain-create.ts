/**
 * How long a root domain takes from POST /v1/create/domain to its completed poll (DKIM key pair
 * generation included). Boots the real app on port 0 with a temp data dir; prints one JSON line.
 * Bounded: ROUNDS domains, 60 s at most.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

const ROUNDS = Number(process.argv[2] ?? 20);
const DEADLINE = Date.now() + 60_000;

const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-bench-'));
const config = loadConfig({
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_LOG_LEVEL: 'silent', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_HOSTNAME: 'bench.mailstead.test',
  MAILSTEAD_DNS_SERVERS: '127.0.0.1:1',
});
const app = await createApp({ config });
const { httpPort } = await app.start();
const base = `http://127.0.0.1:${httpPort}/api`;

try {
  await app.tenants.createTenant('bench', { plan: true });
  const key = await app.tenants.createKey('bench', 'read,write');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const times: number[] = [];
  for (let i = 0; i < ROUNDS && Date.now() < DEADLINE; i++) {
    const started = performance.now();
    const res = await fetch(`${base}/v1/create/domain`, { method: 'POST', headers, body: JSON.stringify({ Domain: `d${i}.bench.example` }) });
    const { task_id } = (await res.json()) as { task_id: number };
    for (;;) {
      const poll = (await (await fetch(`${base}/v1/get/domain?task_id=${task_id}`, { headers })).json()) as { status: string };
      if (poll.status === 'completed') break;
      if (poll.status !== 'queued' && poll.status !== 'running') throw new Error(JSON.stringify(poll));
      if (Date.now() > DEADLINE) throw new Error('benchmark deadline passed');
      await new Promise((r) => setTimeout(r, 2));
    }
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const pick = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  console.log(JSON.stringify({ bench: 'domain-create', rounds: times.length, median_ms: pick(0.5), p90_ms: pick(0.9), max_ms: Math.round(sorted[sorted.length - 1]) }));
} finally {
  await app.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
