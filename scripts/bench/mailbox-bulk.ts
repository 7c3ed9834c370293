/**
 * How long a 100-mailbox bulk create takes, from the POST to the completed poll, with generated
 * passwords (100 scrypt hashes) and with a shared one. Boots the real app on port 0 with a temp
 * data dir and rate limits off; prints one JSON line. Bounded: ROUNDS rounds, 60 s at most.
 */
import { startBenchApp } from './in-process-app.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const DEADLINE = Date.now() + 60_000;

const { app, base, stop } = await startBenchApp();

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(base + path, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() as any };
}

async function waitTask(path: string, key: string, id: number) {
  for (;;) {
    const r = await call('GET', `${path}?task_id=${id}`, key);
    if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r;
    if (Date.now() > DEADLINE) throw new Error('benchmark deadline passed');
    await new Promise((res) => setTimeout(res, 5));
  }
}

try {
  await app.tenants.createTenant('bench', { plan: true });
  const key = await app.tenants.createKey('bench', 'read,write');
  const generated: number[] = [];
  const shared: number[] = [];
  for (let i = 0; i < ROUNDS && Date.now() < DEADLINE; i++) {
    for (const [password, into] of [[0, generated], ['shared password', shared]] as const) {
      const host = `bench${i}${password === 0 ? 'g' : 's'}.example`;
      const d = await call('POST', '/v1/create/domain', key, { Domain: host });
      await waitTask('/v1/get/domain', key, d.body.task_id);
      const started = performance.now();
      const r = await call('POST', '/v1/create/mailbox/bulk', key, { Email_fullname: 'Ann Lee Smith', single_bulk: 'bulk', Domain: host, Params: { mailbox_no: 100, password } });
      const done = await waitTask('/v1/get/mailbox/bulk', key, r.body.task_id);
      if (done.body.total_email !== 100) throw new Error(`bulk created ${JSON.stringify(done.body).slice(0, 200)}`);
      into.push(Math.round(performance.now() - started));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify({ bench: 'mailbox-bulk-100', rounds: generated.length, generated_ms: generated, generated_median_ms: median(generated), shared_ms: shared, shared_median_ms: median(shared) }));
} finally {
  await stop();
}
