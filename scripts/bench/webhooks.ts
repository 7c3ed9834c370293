/**
 * Webhook delivery throughput. A receiver process (this file with `--receiver`, on its own core)
 * answers 200 at once and verifies every X-Webhook-Signature with node:crypto over the raw bytes;
 * a second receiver never answers (every request runs into the 15 s timeout).
 *
 * Phase 1: one webhook to the healthy receiver; a producer keeps a backlog of email events
 *   recorded through the real event recorder (fan-out in the recording transaction), and the
 *   verified deliveries per second are measured over the window once warm.
 * Phase 2: the same tenant also has a webhook to the receiver that times out; the healthy
 *   receiver's verified rate is measured again. The figure of interest is phase2 / phase1.
 *
 * Usage: node --import tsx scripts/bench/webhooks.ts [--seconds=N] [--rounds=R]. The window of each
 * phase is 10 s for phase 1 and 20 s for phase 2 (so the slow receiver's 15 s timeouts and the
 * retries after them happen inside it), or N s for both; R rounds (default 2, at most 5) alternate
 * the phases and the medians are reported. Bounded: each phase stops at its window plus warm-up,
 * and the whole run has a hard deadline. Prints one JSON line.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Msg = { type: 'ports'; healthy: number; slow: number } | { type: 'counts'; ok: number; bad: number; slow: number } | { type: 'secret'; secret: string } | { type: 'count' };

if (process.argv.includes('--receiver')) await receiver();
else await main();

/** The receiver process: verifies and counts. */
async function receiver(): Promise<void> {
  let secret = '';
  let ok = 0;
  let bad = 0;
  let slow = 0;
  const hanging = new Set<ServerResponse>();
  const healthy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const ts = String(req.headers['x-webhook-timestamp']);
      const expected = createHmac('sha256', secret).update(`${ts}.`).update(raw).digest();
      const given = String(req.headers['x-webhook-signature'] ?? '').split(' ')[0];
      const good = /^[0-9a-f]{64}$/.test(given) && timingSafeEqual(Buffer.from(given, 'hex'), expected);
      if (good) ok++; else bad++;
      res.writeHead(good ? 200 : 401, { 'content-length': '0' });
      res.end();
    });
  });
  healthy.keepAliveTimeout = 60_000;
  const timesOut = createServer((req, res) => { slow++; hanging.add(res); req.resume(); });
  await Promise.all([healthy, timesOut].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  process.on('message', (m: Msg) => {
    if (m.type === 'secret') secret = m.secret;
    if (m.type === 'count') process.send!({ type: 'counts', ok, bad, slow } satisfies Msg);
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ports', healthy: (healthy.address() as AddressInfo).port, slow: (timesOut.address() as AddressInfo).port } satisfies Msg);
}

async function main(): Promise<void> {
  const { createApp } = await import('../../src/app.js');
  const { loadConfig } = await import('../../src/config.js');
  const option = (name: string) => { const a = process.argv.find((x) => x.startsWith(`--${name}=`)); return a ? Number(a.split('=')[1]) : null; };
  const window1 = option('seconds') ?? 10;
  const window2 = option('seconds') ?? 20;
  const rounds = Math.max(1, Math.min(option('rounds') ?? 2, 5));
  const WARMUP_MS = 1500;
  const hardDeadline = setTimeout(() => { console.error('benchmark deadline passed'); process.exit(1); }, rounds * ((window1 + window2) * 1000 + 30_000) + 30_000);
  hardDeadline.unref();

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--receiver'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ports = await new Promise<{ healthy: number; slow: number }>((resolve) => child.once('message', (m: Msg) => { if (m.type === 'ports') resolve(m); }));
  const counts = () => new Promise<{ ok: number; bad: number; slow: number }>((resolve) => {
    child.once('message', (m: Msg) => { if (m.type === 'counts') resolve(m); });
    child.send({ type: 'count' } satisfies Msg);
  });

  async function phase(name: string, windowS: number, withSlow: boolean) {
    const dataDir = mkdtempSync(join(tmpdir(), `mailstead-bench-wh-${name}-`));
    const config = loadConfig({
      MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
      MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_LOG_LEVEL: 'silent', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
      MAILSTEAD_HOSTNAME: 'bench.mailstead.test', MAILSTEAD_DNS_SERVERS: '127.0.0.1:1', MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    const app = await createApp({ config });
    try {
      const tenantId = await app.tenants.createTenant(`bench-${name}`, { plan: true });
      const key = (await app.tenants.authenticate(await app.tenants.createKey(`bench-${name}`, 'webhook')))!;
      const hook = await app.webhooks.service.create(key, { url: `http://127.0.0.1:${ports.healthy}/hook`, events: ['email.received'] });
      if (withSlow) await app.webhooks.service.create(key, { url: `http://127.0.0.1:${ports.slow}/hook`, events: ['email.received'] });
      child.send({ type: 'secret', secret: hook.secret } satisfies Msg);

      let recorded = 0;
      const record = async (n: number) => {
        const events = Array.from({ length: n }, (_, i) => ({ tenantId, type: 'email.received' as const, emailId: recorded + i + 1, mailboxId: 1 }));
        await app.db.transaction().execute((trx) => app.webhooks.events.record(trx, events));
        recorded += n;
      };
      await record(5000);
      const start0 = await counts();
      await app.start();
      let producing = true;
      // Keeps 3,000-8,000 deliveries of the healthy webhook waiting, so the engine never runs dry.
      const producer = (async () => {
        while (producing) {
          const { ok } = await counts();
          if (recorded - (ok - start0.ok) < 3000) await record(5000);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      await new Promise((r) => setTimeout(r, WARMUP_MS));
      const a = await counts();
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await new Promise((r) => setTimeout(r, windowS * 1000));
      const b = await counts();
      const cpu = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      producing = false;
      await producer;
      const delivered = b.ok - a.ok;
      const cpuMsPer1000 = Math.round(((cpu.user + cpu.system) / 1000) / Math.max(delivered / 1000, 1e-9));
      return { rate: Math.round(delivered / seconds), cpuMsPer1000, bad: b.bad - start0.bad, slowRequests: b.slow - start0.slow, sent: app.webhooks.engine.stats.sent, app };
    } catch (err) {
      await app.stop();
      throw err;
    } finally {
      // Stopped by the caller after reading figures; the data dir goes now or after stop.
      setTimeout(() => rmSync(dataDir, { recursive: true, force: true }), 0).unref();
    }
  }

  try {
    // Rounds alternate the two phases, so a busy moment of a shared machine hits both alike.
    const r1: Awaited<ReturnType<typeof phase>>[] = [];
    const r2: Awaited<ReturnType<typeof phase>>[] = [];
    for (let i = 0; i < rounds; i++) {
      const p1 = await phase(`baseline${i}`, window1, false);
      await p1.app.stop();
      r1.push(p1);
      const p2 = await phase(`slow${i}`, window2, true);
      await p2.app.stop();
      r2.push(p2);
    }
    const median = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return Math.round((v[Math.floor((v.length - 1) / 2)] + v[Math.ceil((v.length - 1) / 2)]) / 2);
    };
    const m1 = median(r1.map((r) => r.rate));
    const m2 = median(r2.map((r) => r.rate));
    console.log(JSON.stringify({
      bench: 'webhooks',
      healthy_only_deliveries_per_s: m1,
      with_timing_out_receiver_healthy_deliveries_per_s: m2,
      ratio: Number((m2 / Math.max(m1, 1)).toFixed(3)),
      rounds: { healthy_only: r1.map((r) => r.rate), with_timing_out: r2.map((r) => r.rate) },
      server_cpu_ms_per_1000_deliveries: { healthy_only: r1.map((r) => r.cpuMsPer1000), with_timing_out: r2.map((r) => r.cpuMsPer1000) },
      target_per_s: 2000,
      signature_failures: [...r1, ...r2].reduce((n, r) => n + r.bad, 0),
      timing_out_receiver_requests: r2.map((r) => r.slowRequests),
      windows_s: [window1, window2],
    }));
  } finally {
    child.disconnect();
    child.kill();
  }
}
