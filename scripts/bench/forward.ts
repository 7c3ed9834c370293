/**
 * Forwarding throughput, Mailstead next to Postfix: mail to an alias whose only destination is an
 * external address, sent on to that address's MX, which is a sink (smtp-server) in this process.
 *
 * Mailstead runs as `npm start` does (the build; the sources through tsx when the build is stale)
 * with a temporary data dir; its DNS is a server in this script (a worker thread) that publishes
 * the MX of the external domain at 127.0.0.1 and answers NXDOMAIN to everything else. Its copies
 * carry an SRS sender, an ARC set and a DKIM-Signature. Postfix (Debian package) runs from its own
 * temporary config dir with a virtual alias and a transport map to the same sink: plain forwarding,
 * no SRS or signing. For each: CONNECTIONS SMTP sessions send ~5 KB messages back to back for
 * WARMUP seconds (until all arrived), then SECONDS measured; reported: messages per second end to
 * end (from the first send until the sink has every acknowledged message), latency from the
 * forwarder's 250 to the sink's receipt (p50, p99), and forwarder CPU per message over the same span.
 * The sink offers no STARTTLS to either. Prints one JSON line.
 *
 * Usage: node --import tsx scripts/bench/forward.ts [--seconds=10] [--warmup=2] [--connections=10] [--mailstead=1] [--postfix=1] [--main=FILE]
 * Bounded: every phase has its duration and every wait a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { benchEnv, cli, processCpuMs, ROOT, serverArgs, startEnv } from './email-bench-server.js';
import { instanceCpuMs, startPostfixForwarder } from './postfix-forwarder.js';
import { startMxDns } from './mx-dns.js';
import { LeanSmtpClient } from './smtp-client.js';
import { benchApi } from './bench-api.js';

const { values } = parseArgs({ options: { seconds: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, mailstead: { type: 'string' }, postfix: { type: 'string' }, main: { type: 'string' } } });
const SECONDS = Number(values.seconds ?? 10);
const WARMUP = Number(values.warmup ?? 2);
const CONNECTIONS = Number(values.connections ?? 10);
const ALIAS_DOMAIN = 'fwd.bench';
const ALIAS = `fwd@${ALIAS_DOMAIN}`;
const REMOTE_DOMAIN = 'remote.bench';
const GOTO = `relay@${REMOTE_DOMAIN}`;
const SENDER = 'sender@client.example';
const ARRIVAL_WAIT_MS = 180_000;

/** The remote MX: records when each message (by Message-ID) arrived and whether it was signed and SRS-rewritten. */
async function startSink() {
  const arrivals = new Map<string, number>();
  let signed = 0;
  let srs = 0;
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], disableReverseLookup: true, logger: false, maxClients: 1000, size: 0,
    onData(stream, session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => { if (head.length < 65_536 && !head.includes('\r\n\r\n')) head += chunk.toString('latin1'); });
      stream.on('end', () => {
        const at = performance.now();
        const id = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1];
        if (id) arrivals.set(id, at);
        if (/^ARC-Seal:/im.test(head) && /^DKIM-Signature:/im.test(head)) signed++;
        if (/^SRS0=/i.test(session.envelope.mailFrom ? session.envelope.mailFrom.address : '')) srs++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as { port: number }).port, arrivals, counts: () => ({ signed, srs }), close: () => new Promise<void>((r) => server.close(() => r())) };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

const BODY = Array.from({ length: 66 }, () => 'The quick brown fox jumps over the lazy dog while the mail server keeps up. ').join('\r\n');
const messageId = (tag: string, n: number) => `<${tag}-${n}@client.example>`;
const message = (tag: string, n: number) => Buffer.from(`From: Bench Sender <${SENDER}>\r\nTo: ${ALIAS}\r\nSubject: ${tag} ${n}\r\nMessage-ID: ${messageId(tag, n)}\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${BODY}\r\n`, 'latin1');

/** CONNECTIONS senders back to back for `seconds`; the time of each acknowledged message's 250. */
async function load(port: number, seconds: number, tag: string) {
  const acked = new Map<string, number>();
  let n = 0;
  let errors = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    const c = await LeanSmtpClient.open(port, 'client.example');
    while (performance.now() < end) {
      const i = n++;
      try {
        await c.send(SENDER, ALIAS, message(tag, i));
        acked.set(messageId(tag, i), performance.now());
      } catch {
        errors++;
      }
    }
    c.quit();
  }));
  return { acked, errors, started, lastAck: Math.max(...acked.values()) };
}

/** Waits until the sink has every message of `ids` (ARRIVAL_WAIT_MS at most); the count that arrived. */
async function arrivedAll(sink: Sink, ids: Iterable<string>): Promise<number> {
  const wanted = [...ids];
  const deadline = Date.now() + ARRIVAL_WAIT_MS;
  for (;;) {
    const got = wanted.filter((id) => sink.arrivals.has(id)).length;
    if (got === wanted.length || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/** Warm-up, then the measured phase against a forwarder on `port`; `cpu` reads its CPU milliseconds so far. */
async function measure(name: string, port: number, sink: Sink, cpu: () => number | null) {
  const warm = WARMUP > 0 ? await load(port, WARMUP, `${name}-warm`) : null;
  if (warm && (await arrivedAll(sink, warm.acked.keys())) < warm.acked.size) throw new Error(`${name}: warm-up mail did not all arrive`);
  const cpuBefore = cpu();
  const senderBefore = process.cpuUsage();
  const run = await load(port, SECONDS, name);
  const arrived = await arrivedAll(sink, run.acked.keys());
  const cpuAfter = cpu();
  const sender = process.cpuUsage(senderBefore);
  const latencies = [...run.acked].map(([id, ack]) => (sink.arrivals.get(id) ?? Number.NaN) - ack).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const lastArrival = Math.max(...[...run.acked.keys()].map((id) => sink.arrivals.get(id) ?? 0));
  const pct = (p: number) => round(Math.max(0, latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? Number.NaN));
  return {
    acked: run.acked.size, errors: run.errors, forwarded: arrived, all_forwarded: arrived === run.acked.size,
    acked_per_s: Math.round(run.acked.size / ((run.lastAck - run.started) / 1000)),
    forwarded_per_s: Math.round(arrived / ((lastArrival - run.started) / 1000)),
    forward_latency_p50_ms: pct(0.5), forward_latency_p99_ms: pct(0.99),
    server_cpu_us_per_msg: cpuBefore !== null && cpuAfter !== null ? Math.round(((cpuAfter - cpuBefore) * 1000) / Math.max(arrived, 1)) : null,
    // This process (senders and sink) shares the two cores with the forwarder.
    bench_process_cpu_us_per_msg: Math.round((sender.user + sender.system) / Math.max(arrived, 1)),
  };
}

/** Mailstead as npm start runs it, with a tenant, the alias domain and the forwarder. */
async function mailstead(sink: Sink, dns: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-forward-bench-'));
  const env = {
    ...process.env, ...startEnv(), ...benchEnv(dataDir), MAILSTEAD_DNS_SERVERS: dns,
    MAILSTEAD_OUTBOUND_PORT: String(sink.port), MAILSTEAD_OUTBOUND_ALLOW_PRIVATE: 'true', MAILSTEAD_LOG_LEVEL: 'warn',
  };
  const args = serverArgs(values.main);
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, MAILSTEAD_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const ports = await new Promise<{ http: number; smtp: number }>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error('mailstead did not start')), 60_000);
      child.stdout!.on('data', (d) => {
        if (out === null) return;
        out += d;
        const http = /"http_port":(\d+)/.exec(out);
        const smtp = /"smtp_port":(\d+)/.exec(out);
        if (http && smtp) { clearTimeout(timer); out = ''; child.stdout!.removeAllListeners('data'); child.stdout!.resume(); resolve({ http: Number(http[1]), smtp: Number(smtp[1]) }); }
      });
      child.once('exit', (code) => reject(new Error(`mailstead exited ${code}`)));
    });
    await cli(dataDir, ['tenant', 'create', 'bench', '--plan', 'active']);
    const key = await cli(dataDir, ['key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
    const { call, task } = benchApi(ports.http, key);
    await task('/v1/get/domain', await call('POST', '/v1/create/domain', { Domain: ALIAS_DOMAIN }));
    await task('/v1/get/alias', await call('POST', '/v1/create/alias', { Domain: ALIAS_DOMAIN, Params: { address: ALIAS, goto: [GOTO] } }));
    const result = await measure('mailstead', ports.smtp, sink, () => processCpuMs(child.pid!)?.total ?? null);
    const queue = await call('GET', '/v1/outbound?per_page=100&status=failed');
    return { server: args.join(' '), ...result, failed_items_first_page: Array.isArray(queue.data) ? queue.data.length : null };
  } finally {
    child.kill('SIGTERM');
    await new Promise((res) => { child.once('exit', res); setTimeout(res, 15_000); });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postfix(sink: Sink) {
  const pf = await startPostfixForwarder({ alias: ALIAS, goto: GOTO, sinkPort: sink.port });
  try {
    const result = await measure('postfix', pf.port, sink, () => { const pid = pf.masterPid(); return pid ? instanceCpuMs(pid) : null; });
    return { version: pf.version, ...result };
  } catch (err) {
    return { error: String(err), log: pf.logTail() };
  } finally {
    await pf.stop();
  }
}

async function main() {
  // The host is shared: its load average says how far rates can be trusted (CPU per message less affected).
  const loadBefore = loadavg()[0];
  const dns = await startMxDns(REMOTE_DOMAIN);
  const sink = await startSink();
  try {
    const ours = (values.mailstead ?? '1') !== '0' ? await mailstead(sink, dns.server).catch((err) => ({ error: String(err) })) : null;
    const signedBy = sink.counts();
    const theirs = (values.postfix ?? '1') !== '0' ? await postfix(sink).catch((err) => ({ error: String(err) })) : null;
    console.log(JSON.stringify({
      bench: 'forward', connections: CONNECTIONS, seconds: SECONDS, warmup: WARMUP, message_bytes: message('x', 0).length,
      mailstead: ours && { ...ours, copies_with_arc_and_dkim: signedBy.signed, copies_with_srs_sender: signedBy.srs },
      postfix: theirs,
      load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) },
    }));
  } finally {
    await sink.close();
    await dns.stop();
  }
}

await main();
