/**
 * How long a root domain takes from POST /v1/create/domain to its completed poll (DKIM key pair
 * generation included). Boots the real app on port 0 with a temp data dir; prints one JSON line.
 * Bounded: ROUNDS domains, 60 s at most.
 */
import { startBenchApp } from './in-process-app.js';

const ROUNDS = Number(process.argv[2] ?? 20);
const DEADLINE = Date.now() + 60_000;

const { app, base, stop } = await startBenchApp();

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
  await stop();
}
