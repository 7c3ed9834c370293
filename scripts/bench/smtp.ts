/**
 * SMTP ingress throughput: the server runs as a child process (the build as `npm start` runs it
 * when dist/ is current, see --main below; rate limits off; DNS from a local server that answers at
 * once) and this script is its senders and its API reader. docs/PERFORMANCE.md gives the figures.
 *
 * 0. A warm-up: the same senders for WARMUP seconds, then a wait until that mail is listed, so the
 *    phases measure a running server (JIT-compiled code, parser threads up), not the first second
 *    after its start, and a sender process whose own code is compiled (--warmup=0: a cold start).
 * 1. CONNECTIONS sessions send ~5 KB messages back to back for SECONDS: acknowledged msgs/s and
 *    latency percentiles (send to 250), then how long until the last one is listed by
 *    GET /v1/emails and the full count is confirmed there (end-to-end msgs/s).
 * 2. The same with a 74 KB attachment per message for ATTACH_SECONDS.
 * 3. One message just under 25 MB: RSS growth of the server while it is received, and until it is
 *    listed (parsed and stored).
 * The server's RSS is sampled every 100 ms throughout. Prints one JSON line.
 *
 * Usage: node --import tsx scripts/bench/smtp.ts [--warmup=2] [--seconds=20] [--attach-seconds=10] [--connections=10] [--big=1] [--client=lean|nodemailer] [--rate=0]
 *   (--rate=N: phase 1 offers N msgs/s in all, message i not sent before i/N s from the start, to
 *   measure a sustained rate end to end rather than how a burst beyond it drains)
 *   (--client: the senders of phases 1 and 2: smtp-client.ts, the same dialogue as nodemailer's
 *   SMTPConnection without its per-byte data loop (default), or SMTPConnection itself)
 *   (BENCH_NODE_ARGS: node flags for the server after npm start's, e.g. "--cpu-prof"; BENCH_SERVER_ENV="NAME=value ...":
 *   variables for the server alone; BENCH_SERVER_OUT=FILE: append its stdout there)
 *   [--main=FILE] (default: dist/src/main.js when built after the last source change, else src/main.ts through tsx)
 * Bounded: every phase has its duration and every wait a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { assignments, processCpuMs, serverArgs, startEnv } from './email-bench-server.js';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { quietDns } from '../../test/helpers/dns.js';
import { LeanSmtpClient } from './smtp-client.js';

const { values } = parseArgs({ options: { warmup: { type: 'string' }, seconds: { type: 'string' }, 'attach-seconds': { type: 'string' }, connections: { type: 'string' }, big: { type: 'string' }, main: { type: 'string' }, client: { type: 'string' }, rate: { type: 'string' } } });
const WARMUP = Number(values.warmup ?? 2);
const SECONDS = Number(values.seconds ?? 20);
const ATTACH_SECONDS = Number(values['attach-seconds'] ?? 10);
/** Offered load of phase 1 in msgs/s over all connections (0: each sends back to back). */
const RATE = Number(values.rate ?? 0);
const CONNECTIONS = Number(values.connections ?? 10);
const BIG = (values.big ?? '1') !== '0';
const CLIENT = values.client ?? 'lean';
if (CLIENT !== 'lean' && CLIENT !== 'nodemailer') throw new Error('--client is lean or nodemailer');
// The server: the build (`npm run build`: dist/src/main.js, what `npm start` runs, with parser threads)
// when there is one, else the sources through tsx (in-process parsing); --main=FILE picks another.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = serverArgs(values.main);

const DOMAIN = 'bench.test';
const RCPT = `inbox@${DOMAIN}`;

const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-smtp-bench-'));
const env = {
  ...process.env,
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_LOG_LEVEL: 'info', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
  MAILSTEAD_HOSTNAME: 'mx.bench.test', MAILSTEAD_DNS_SERVERS: await quietDns(),
};

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${args.join(' ')}: ${err}`))));
  });
}

/** The variables the server gets beyond the bench's own: npm start's, then BENCH_SERVER_ENV ("NAME=value ...", e.g. LD_PRELOAD for a heap profiler). */
const SERVER_ENV = { ...startEnv(), ...assignments((process.env.BENCH_SERVER_ENV ?? '').split(' ').filter(Boolean)) };

function startServer(): Promise<{ child: ChildProcess; httpPort: number; smtpPort: number }> {
  const child = spawn(process.execPath, MAIN, { cwd: ROOT, env: { ...env, ...SERVER_ENV }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    let httpPort = 0;
    let smtpPort = 0;
    const timer = setTimeout(() => reject(new Error('server did not start')), 30_000);
    child.stdout!.on('data', (d) => {
      if (process.env.BENCH_SERVER_OUT) appendFileSync(process.env.BENCH_SERVER_OUT, d);
      buf += d;
      // Only the start-up lines matter; later output is dropped so the pipe never fills.
      if (httpPort && smtpPort) { buf = ''; return; }
      for (const line of buf.split('\n')) {
        const http = /"http_port":(\d+)/.exec(line);
        const smtp = /"smtp_port":(\d+)/.exec(line);
        if (http) httpPort = Number(http[1]);
        if (smtp) smtpPort = Number(smtp[1]);
      }
      if (httpPort && smtpPort) { clearTimeout(timer); resolve({ child, httpPort, smtpPort }); }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

const rssMb = (pid: number) => {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
};

function body5k(): string {
  const line = 'The quick brown fox jumps over the lazy dog while the mail server keeps up. ';
  return Array.from({ length: 66 }, () => line).join('\r\n');
}

function message(n: number, tag: string, attachment: string | null): string {
  const head = `From: Bench Sender <sender@client.example>\r\nTo: ${RCPT}\r\nSubject: ${tag} ${n}\r\nMessage-ID: <${tag}-${n}@client.example>\r\nMIME-Version: 1.0\r\n`;
  if (!attachment) return `${head}Content-Type: text/plain; charset=utf-8\r\n\r\n${body5k()}\r\n`;
  return `${head}Content-Type: multipart/mixed; boundary=bb\r\n\r\n--bb\r\nContent-Type: text/plain\r\n\r\n${body5k()}\r\n--bb\r\nContent-Type: application/pdf; name=report.pdf\r\nContent-Disposition: attachment; filename=report.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--bb--\r\n`;
}

async function client(port: number): Promise<SMTPConnection> {
  const c = new SMTPConnection({ host: '127.0.0.1', port, ignoreTLS: true, name: 'client.example', socketTimeout: 60_000 });
  c.on('error', () => undefined);
  await new Promise<void>((res, rej) => c.connect((err) => (err ? rej(err) : res())));
  return c;
}

const send = (c: SMTPConnection, raw: string | Buffer) => new Promise<void>((res, rej) => {
  c.send({ from: 'sender@client.example', to: [RCPT] }, raw, (err) => (err ? rej(err) : res()));
});

/** A sender of the load phases: one session, messages one after the other. */
interface Sender {
  send(raw: string): Promise<void>;
  quit(): void;
}

async function sender(port: number): Promise<Sender> {
  if (CLIENT === 'lean') {
    const c = await LeanSmtpClient.open(port, 'client.example');
    return { send: (raw) => c.send('sender@client.example', RCPT, Buffer.from(raw, 'latin1')), quit: () => c.quit() };
  }
  const c = await client(port);
  return { send: (raw) => send(c, raw), quit: () => c.quit() };
}

/** CONNECTIONS senders back to back for `seconds`; returns counts and latencies. */
async function load(port: number, seconds: number, tag: string, attachment: string | null, rate = 0) {
  const latencies: number[] = [];
  /** Acknowledgements per second of the phase: shows where in a burst the rate changes (the in-flow bound, storage no longer yielding). */
  const bySecond: number[] = [];
  let n = 0;
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  let lastAck = started;
  let lastIndex = -1;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    const c = await sender(port);
    while (performance.now() < end) {
      const i = n++;
      if (rate > 0) {
        const due = started + (i * 1000) / rate;
        if (due >= end) break;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const t0 = performance.now();
      try {
        await c.send(message(i, tag, attachment));
        const t1 = performance.now();
        latencies.push(t1 - t0);
        const second = Math.floor((t1 - started) / 1000);
        bySecond[second] = (bySecond[second] ?? 0) + 1;
        if (t1 >= lastAck) { lastAck = t1; lastIndex = i; }
      } catch {
        errors++;
      }
    }
    c.quit();
  }));
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10;
  const elapsed = (lastAck - started) / 1000;
  return { acked: latencies.length, errors, elapsed, rate: Math.round(latencies.length / elapsed), p50: pct(0.5), p99: pct(0.99), started, lastAck, lastIndex, bySecond: Array.from(bySecond, (v) => v ?? 0) };
}

/** Server CPU per acknowledged message over a phase: all threads, and the main thread alone. */
function cpuPerMessage(before: ReturnType<typeof processCpuMs>, after: ReturnType<typeof processCpuMs>, acked: number) {
  if (!before || !after) return {};
  return {
    server_cpu_us_per_msg: Math.round(((after.total - before.total) * 1000) / Math.max(acked, 1)),
    main_thread_cpu_us_per_msg: Math.round(((after.main - before.main) * 1000) / Math.max(acked, 1)),
  };
}

async function main() {
  const server = await startServer();
  const pid = server.child.pid!;
  let peak = 0;
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 100);
  const base = `http://127.0.0.1:${server.httpPort}/api`;
  try {
    await run(['bin/mailstead.js', 'tenant', 'create', 'bench', '--plan', 'active']);
    const key = await run(['bin/mailstead.js', 'key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: await res.json() as any };
    };
    const waitTask = async (path: string, id: number) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await call('GET', `${path}?task_id=${id}`);
        if (!['queued', 'running'].includes(r.body.status)) return r;
        if (Date.now() > deadline) throw new Error('task deadline');
        await new Promise((res) => setTimeout(res, 10));
      }
    };
    await waitTask('/v1/get/domain', (await call('POST', '/v1/create/domain', { Domain: DOMAIN })).body.task_id);
    const box = await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench Inbox', single_bulk: 'single', Domain: DOMAIN, Params: { email_id: RCPT, password: 0 } });
    await waitTask('/v1/get/mailbox/single', box.body.task_id);
    const rssIdle = rssMb(pid);

    /** When the message with this subject is first listed (0: not within 60 s), and the server's CPU then. */
    const listedAt = async (subject: string) => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const page = await call('GET', '/v1/emails?per_page=100');
        if (page.body.data.some((e: any) => e.subject === subject)) return { visibleAt: performance.now(), cpuVisible: processCpuMs(pid) };
        // Every 100 ms, not faster: a 100-email page every 20 ms took about a sixth of a core from the
        // server (and as much in this process) while the backlog drained, slowing what it measures.
        await new Promise((res) => setTimeout(res, 100));
      }
      return { visibleAt: 0, cpuVisible: null };
    };

    // Phase 0: warm-up, stored and listed before the measured phases start.
    const warm = WARMUP > 0 ? await load(server.smtpPort, WARMUP, 'warm', null) : null;
    if (warm && !(await listedAt(`warm ${warm.lastIndex}`)).visibleAt) throw new Error('warm-up mail not listed within 60 s');
    const warmed = warm?.acked ?? 0;

    // Phase 1: 5 KB messages.
    const cpuBefore = processCpuMs(pid);
    const senderBefore = process.cpuUsage();
    const plain = await load(server.smtpPort, SECONDS, 'plain', null, RATE);
    const senderCpu = process.cpuUsage(senderBefore);
    const cpuAfter = processCpuMs(pid);
    // Server CPU per acknowledged message during the load, all threads and the main thread alone.
    const plainCpu = cpuPerMessage(cpuBefore, cpuAfter, plain.acked);
    // End to end: the last acknowledged message listed, then the full count confirmed.
    const { visibleAt, cpuVisible } = await listedAt(`plain ${plain.lastIndex}`);
    let listed = 0;
    let cursor: string | null = null;
    for (let pages = 0; pages < 100_000; pages++) {
      const r = await call('GET', `/v1/emails?per_page=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      listed += r.body.data.length;
      cursor = r.body.meta.next_cursor;
      if (!cursor) break;
    }
    const countedAt = performance.now();
    const visibleAfter = visibleAt ? (visibleAt - plain.lastAck) / 1000 : null;

    // Phase 2: 74 KB attachment.
    const attachment = Buffer.from(Array.from({ length: 74 * 1024 }, (_, i) => (i * 7 + 0x25) & 0xff)).toString('base64').replace(/.{76}/g, '$&\r\n');
    const cpuAttachBefore = processCpuMs(pid);
    const attached = ATTACH_SECONDS > 0 ? await load(server.smtpPort, ATTACH_SECONDS, 'attach', attachment) : null;
    const cpuAttachAfter = processCpuMs(pid);
    const attachCpu = attached ? cpuPerMessage(cpuAttachBefore, cpuAttachAfter, attached.acked) : {};

    // Phase 3: one message just under 25 MB.
    let big: { ok: boolean; rss_before_mb: number; rss_peak_mb: number; growth_mb: number; seconds: number; listed_after_s: number | null; growth_until_listed_mb: number } | null = null;
    if (BIG) {
      await new Promise((res) => setTimeout(res, 3000));
      const before = rssMb(pid);
      let bigPeak = before;
      const s = setInterval(() => { bigPeak = Math.max(bigPeak, rssMb(pid)); }, 25);
      const raw = Buffer.from(`From: sender@client.example\r\nSubject: big\r\nMessage-ID: <big@client.example>\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.alloc(18 * 1024 * 1024, 1).toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`);
      const c = await client(server.smtpPort);
      const t0 = performance.now();
      let ok = true;
      await send(c, raw).catch(() => { ok = false; });
      const seconds = (performance.now() - t0) / 1000;
      c.quit();
      const acceptedPeak = bigPeak;
      // Then until it is listed: parsing and storing it (its 18 MB attachment decoded) count too.
      const { visibleAt: bigListedAt } = ok ? await listedAt('big') : { visibleAt: 0 };
      clearInterval(s);
      big = {
        ok, rss_before_mb: Math.round(before), rss_peak_mb: Math.round(acceptedPeak), growth_mb: Math.round(acceptedPeak - before), seconds: Math.round(seconds * 100) / 100,
        listed_after_s: bigListedAt ? Math.round(((bigListedAt - t0) / 1000 - seconds) * 100) / 100 : null,
        growth_until_listed_mb: Math.round(bigPeak - before),
      };
    }

    console.log(JSON.stringify({
      bench: 'smtp',
      server: MAIN.join(' '),
      server_env: Object.entries(SERVER_ENV).map(([k, v]) => `${k}=${v}`).join(' '),
      connections: CONNECTIONS,
      client: CLIENT,
      warmup: warm && { seconds: WARMUP, acked: warm.acked, acked_per_s: warm.rate },
      plain_5kb: {
        offered_per_s: RATE || null, seconds: Math.round(plain.elapsed * 10) / 10, acked: plain.acked, errors: plain.errors, acked_per_s: plain.rate, p50_ms: plain.p50, p99_ms: plain.p99, ...plainCpu,
        last_visible_after_s: visibleAfter === null ? null : Math.round(visibleAfter * 100) / 100,
        end_to_end_per_s: visibleAt ? Math.round(plain.acked / ((visibleAt - plain.started) / 1000)) : null,
        // All the server's CPU from the first message until the last one was listed (accepting, parsing,
        // storing, indexing, and the benchmark's own polling reads), per message: less noisy than rates.
        end_to_end_server_cpu_us_per_msg: cpuBefore && cpuVisible ? Math.round(((cpuVisible.total - cpuBefore.total) * 1000) / Math.max(plain.acked, 1)) : null,
        listed: listed - warmed, all_listed: listed - warmed >= plain.acked, count_confirmed_after_s: Math.round(((countedAt - plain.lastAck) / 1000) * 100) / 100,
        acked_by_second: plain.bySecond,
        // This process's CPU (the senders) per acknowledged message: it shares the server's cores.
        sender_cpu_us_per_msg: Math.round((senderCpu.user + senderCpu.system) / Math.max(plain.acked, 1)),
      },
      attach_74kb: attached && { seconds: Math.round(attached.elapsed * 10) / 10, acked: attached.acked, errors: attached.errors, acked_per_s: attached.rate, p50_ms: attached.p50, p99_ms: attached.p99, ...attachCpu },
      message_25mb: big,
      rss_idle_mb: Math.round(rssIdle),
      rss_peak_mb: Math.round(peak),
    }));
  } finally {
    clearInterval(sampler);
    server.child.kill('SIGTERM');
    await new Promise((res) => { server.child.once('exit', res); setTimeout(res, 12_000); });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
