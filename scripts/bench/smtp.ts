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
 *          [--database=sqlite|postgres|both] [--nodes=1] [--spam-train=0] [--messages=plain|corpus]
 *   (--messages=corpus: phase 1 sends SpamAssassin corpus messages of 2-8 KB, spam and ham in turn, with
 *   their own header fields, instead of the one 5 KB line repeated: what a spam filter really reads)
 *   (--spam-train=N: before the warm-up, the bench tenant's spam model is trained with N corpus spam and
 *   N ham messages through the junk / not-junk API (spam-train.ts), so that the spam filter's cost is
 *   measured with a model in use; the line gets `spam_training`: what was trained, the probe's verdict,
 *   and whether measured messages carry a BAYES_* reason)
 *   (--rate=N: phase 1 offers N msgs/s in all, message i not sent before i/N s from the start, to
 *   measure a sustained rate end to end rather than how a burst beyond it drains)
 *   (--client: the senders of phases 1 and 2: smtp-client.ts, the same dialogue as nodemailer's
 *   SMTPConnection without its per-byte data loop (default), or SMTPConnection itself)
 *   (--database: SQLite in the data dir (default); PostgreSQL, a fresh database on a durable local
 *   cluster (bench-postgres.ts) through MAILSTEAD_DATABASE_URL; or both, SQLite mode first, in one
 *   invocation, printing `sqlite: {...}, postgres: {...}` side by side. --nodes=N (PostgreSQL
 *   mode): N server processes, each with a data dir of its own, on the same database; the
 *   connections are dealt out among them in turn and the figures are combined; phase 3 goes to the
 *   first node)
 *   (BENCH_NODE_ARGS: node flags for the server after npm start's, e.g. "--cpu-prof"; BENCH_SERVER_ENV="NAME=value ...":
 *   variables for the server alone; BENCH_SERVER_OUT=FILE: append its stdout there)
 *   [--main=FILE] (default: dist/src/main.js when built after the last source change, else src/main.ts through tsx)
 * Bounded: every phase has its duration and every wait a deadline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { quietDns } from '../../test/helpers/dns.js';
import { benchPostgres, databaseOption, stopBenchPostgres, type BenchPostgres } from './bench-postgres.js';
import { assignments, serverArgs, startEnv } from './email-bench-server.js';
import { measuredVerdicts, trainTenantModel } from './spam-train.js';
import { corpusLoadMessages } from './spam-corpus.js';
import { attachment74k, useMessages, client, cpuOf, cpuPerMessage, DOMAIN, load, RCPT, rssMb, send, type ClientKind, type CpuReading } from './smtp-load.js';

const { values } = parseArgs({ options: {
  warmup: { type: 'string' }, seconds: { type: 'string' }, 'attach-seconds': { type: 'string' }, connections: { type: 'string' }, big: { type: 'string' },
  main: { type: 'string' }, client: { type: 'string' }, rate: { type: 'string' }, database: { type: 'string' }, nodes: { type: 'string' },
  'spam-train': { type: 'string' }, messages: { type: 'string' },
} });
const WARMUP = Number(values.warmup ?? 2);
const SECONDS = Number(values.seconds ?? 20);
const ATTACH_SECONDS = Number(values['attach-seconds'] ?? 10);
/** Offered load of phase 1 in msgs/s over all connections (0: each sends back to back). */
const RATE = Number(values.rate ?? 0);
const CONNECTIONS = Number(values.connections ?? 10);
const BIG = (values.big ?? '1') !== '0';
/** Corpus messages of each class the tenant's spam model is trained with before the warm-up (0: none). */
const SPAM_TRAIN = Number(values['spam-train'] ?? 0);
if (!Number.isInteger(SPAM_TRAIN) || SPAM_TRAIN < 0) throw new Error('--spam-train is a count of messages per class');
const MESSAGES = values.messages ?? 'plain';
if (MESSAGES !== 'plain' && MESSAGES !== 'corpus') throw new Error('--messages is plain or corpus');
if (MESSAGES === 'corpus') useMessages(corpusLoadMessages());
const CLIENT = (values.client ?? 'lean') as ClientKind;
if (CLIENT !== 'lean' && CLIENT !== 'nodemailer') throw new Error('--client is lean or nodemailer');
const DATABASE = databaseOption(values.database);
/** Server processes in PostgreSQL mode (SQLite mode always runs one: its database is a file of one node). */
const NODES = Number(values.nodes ?? 1);
if (!Number.isInteger(NODES) || NODES < 1 || NODES > 8) throw new Error('--nodes is 1 to 8');
if (NODES > 1 && DATABASE === 'sqlite') throw new Error('--nodes needs --database=postgres or both');
// The server: the build (`npm run build`: dist/src/main.js, what `npm start` runs, with parser threads)
// when there is one, else the sources through tsx (in-process parsing); --main=FILE picks another.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = serverArgs(values.main);
const DNS_SERVERS = await quietDns();

/** The environment of a server (and of the CLI) on `dataDir`, with PostgreSQL's URL in PostgreSQL mode. */
const envOf = (dataDir: string, databaseUrl: string | null): NodeJS.ProcessEnv => ({
  ...process.env,
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  // Every listener on a port of its own choosing: two nodes (or another bench) never collide on 587 / 465.
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0', MAILSTEAD_LOG_LEVEL: 'info', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
  MAILSTEAD_HOSTNAME: 'mx.bench.test', MAILSTEAD_DNS_SERVERS: DNS_SERVERS,
  ...(databaseUrl ? { MAILSTEAD_DATABASE_URL: databaseUrl } : {}),
});

function run(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
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

interface Server { child: ChildProcess; httpPort: number; smtpPort: number }

function startServer(env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, MAIN, { cwd: ROOT, env: { ...env, ...SERVER_ENV }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    let httpPort = 0;
    let smtpPort = 0;
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('server did not start')); }, 30_000);
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
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}`)); });
  });
}

async function stopServer(s: Server): Promise<void> {
  s.child.kill('SIGTERM');
  await new Promise((res) => { s.child.once('exit', res); setTimeout(res, 12_000); });
}

/** The phases against running servers (one, or NODES on one PostgreSQL database); returns the mode's figures. */
async function phases(servers: Server[], env: NodeJS.ProcessEnv, database: BenchPostgres | null) {
  const pids = servers.map((s) => s.child.pid!);
  const ports = servers.map((s) => s.smtpPort);
  const peaks = pids.map(() => 0);
  const sampler = setInterval(() => pids.forEach((pid, i) => { peaks[i] = Math.max(peaks[i], rssMb(pid)); }), 100);
  const cpu = (): CpuReading | null => cpuOf(pids, database ? database.cpuMs : null);
  const base = `http://127.0.0.1:${servers[0].httpPort}/api`;
  try {
    await run(env, ['bin/mailstead.js', 'tenant', 'create', 'bench', '--plan', 'active']);
    const key = await run(env, ['bin/mailstead.js', 'key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
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
    const createMailbox = async (address: string) => {
      const box = await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench Inbox', single_bulk: 'single', Domain: DOMAIN, Params: { email_id: address, password: 0 } });
      await waitTask('/v1/get/mailbox/single', box.body.task_id);
    };
    await createMailbox(RCPT);
    // --spam-train: the tenant's model trained (through another mailbox) before anything is measured; its mail stays listed.
    const training = SPAM_TRAIN > 0 ? await trainTenantModel({ call, createMailbox, smtpPort: ports[0], domain: DOMAIN, perClass: SPAM_TRAIN }) : null;
    if (training) process.stderr.write(`spam training: ${JSON.stringify(training)}\n`);
    const preexisting = training?.listedAfter ?? 0;
    // Where delivered mail may be filed: with a trained model, spam goes to Junk (and the trainer's is there).
    const folders = training || MESSAGES === 'corpus' ? ['INBOX', 'Junk'] : ['INBOX'];
    const rssIdle = pids.map(rssMb);

    /** When the message with this subject is first listed (0: not within 60 s), and the CPU then. */
    const listedAt = async (subject: string) => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        for (const folder of folders) {
          const page = await call('GET', `/v1/emails?per_page=100&folder=${folder}`);
          if (page.body.data?.some((e: any) => e.subject === subject)) return { visibleAt: performance.now(), cpuVisible: cpu() };
        }
        // Every 100 ms, not faster: a 100-email page every 20 ms took about a sixth of a core from the
        // server (and as much in this process) while the backlog drained, slowing what it measures.
        await new Promise((res) => setTimeout(res, 100));
      }
      return { visibleAt: 0, cpuVisible: null };
    };
    const phase = { ports, connections: CONNECTIONS, client: CLIENT };

    // Phase 0: warm-up, stored and listed before the measured phases start.
    const warm = WARMUP > 0 ? await load({ ...phase, seconds: WARMUP, tag: 'warm', attachment: null }) : null;
    if (warm && !warm.acked) throw new Error(`warm-up: no message acknowledged (${warm.errors} refused)`);
    if (warm && !(await listedAt(`warm ${warm.lastIndex}`)).visibleAt) throw new Error('warm-up mail not listed within 60 s');
    const warmed = warm?.acked ?? 0;

    // Phase 1: 5 KB messages.
    const cpuBefore = cpu();
    const senderBefore = process.cpuUsage();
    const plain = await load({ ...phase, seconds: SECONDS, tag: 'plain', attachment: null, rate: RATE });
    const senderCpu = process.cpuUsage(senderBefore);
    // CPU per acknowledged message during the load: the servers' threads, their main threads, PostgreSQL's.
    const plainCpu = cpuPerMessage(cpuBefore, cpu(), plain.acked);
    // End to end: the last acknowledged message listed, then the full count confirmed.
    const { visibleAt, cpuVisible } = await listedAt(`plain ${plain.lastIndex}`);
    let listed = 0;
    for (const folder of folders) {
      let cursor: string | null = null;
      for (let pages = 0; pages < 100_000; pages++) {
        const r = await call('GET', `/v1/emails?per_page=100&folder=${folder}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        listed += r.body.data?.length ?? 0;
        cursor = r.body.meta?.next_cursor ?? null;
        if (!cursor) break;
      }
    }
    const countedAt = performance.now();
    // Whether the model judged the measured mail (BAYES_* among a few of their reasons), read after the phase.
    const measured = training ? await measuredVerdicts(call, 'plain') : null;
    if (measured) process.stderr.write(`spam training: measured messages ${JSON.stringify(measured)}\n`);
    const visibleAfter = visibleAt ? (visibleAt - plain.lastAck) / 1000 : null;
    const endToEndCpu = cpuPerMessage(cpuBefore, cpuVisible, plain.acked);

    // Phase 2: 74 KB attachment.
    const cpuAttachBefore = cpu();
    const attached = ATTACH_SECONDS > 0 ? await load({ ...phase, seconds: ATTACH_SECONDS, tag: 'attach', attachment: attachment74k() }) : null;
    const attachCpu = attached ? cpuPerMessage(cpuAttachBefore, cpu(), attached.acked) : {};

    // Phase 3: one message just under 25 MB, to the first node.
    let big: { ok: boolean; rss_before_mb: number; rss_peak_mb: number; growth_mb: number; seconds: number; listed_after_s: number | null; growth_until_listed_mb: number } | null = null;
    if (BIG) {
      await new Promise((res) => setTimeout(res, 3000));
      const before = rssMb(pids[0]);
      let bigPeak = before;
      const s = setInterval(() => { bigPeak = Math.max(bigPeak, rssMb(pids[0])); }, 25);
      const raw = Buffer.from(`From: sender@client.example\r\nSubject: big\r\nMessage-ID: <big@client.example>\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.alloc(18 * 1024 * 1024, 1).toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`);
      const c = await client(ports[0]);
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

    return {
      nodes: servers.length,
      warmup: warm && { seconds: WARMUP, acked: warm.acked, acked_per_s: warm.rate },
      plain_5kb: {
        offered_per_s: RATE || null, seconds: Math.round(plain.elapsed * 10) / 10, acked: plain.acked, errors: plain.errors, acked_per_s: plain.rate, p50_ms: plain.p50, p99_ms: plain.p99, ...plainCpu,
        last_visible_after_s: visibleAfter === null ? null : Math.round(visibleAfter * 100) / 100,
        end_to_end_per_s: visibleAt ? Math.round(plain.acked / ((visibleAt - plain.started) / 1000)) : null,
        // All the servers' CPU (and PostgreSQL's) from the first message until the last one was listed (accepting,
        // parsing, storing, indexing, and the benchmark's own polling reads), per message: less noisy than rates.
        end_to_end_server_cpu_us_per_msg: endToEndCpu.server_cpu_us_per_msg ?? null,
        ...(endToEndCpu.postgres_cpu_us_per_msg !== undefined ? { end_to_end_postgres_cpu_us_per_msg: endToEndCpu.postgres_cpu_us_per_msg } : {}),
        listed: listed - warmed - preexisting, all_listed: listed - warmed - preexisting >= plain.acked, count_confirmed_after_s: Math.round(((countedAt - plain.lastAck) / 1000) * 100) / 100,
        acked_by_second: plain.bySecond,
        // This process's CPU (the senders) per acknowledged message: it shares the server's cores.
        sender_cpu_us_per_msg: Math.round((senderCpu.user + senderCpu.system) / Math.max(plain.acked, 1)),
      },
      attach_74kb: attached && { seconds: Math.round(attached.elapsed * 10) / 10, acked: attached.acked, errors: attached.errors, acked_per_s: attached.rate, p50_ms: attached.p50, p99_ms: attached.p99, ...attachCpu },
      message_25mb: big,
      ...(training ? { spam_training: { ...training, listedAfter: undefined, measured } } : {}),
      // One node: its RSS; several: the largest node's, and each node's.
      rss_idle_mb: Math.round(Math.max(...rssIdle)),
      rss_peak_mb: Math.round(Math.max(...peaks)),
      ...(servers.length > 1 ? { rss_peak_mb_by_node: peaks.map(Math.round) } : {}),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** One mode: its servers on fresh data dirs (and a fresh PostgreSQL database), the phases, then everything removed. */
async function runMode(mode: 'sqlite' | 'postgres') {
  const database = mode === 'postgres' ? await benchPostgres() : null;
  const nodes = mode === 'postgres' ? NODES : 1;
  const dataDirs = Array.from({ length: nodes }, () => mkdtempSync(join(tmpdir(), 'mailstead-smtp-bench-')));
  const servers: Server[] = [];
  const loadBefore = loadavg()[0];
  try {
    // One after the other: the first runs the migrations on the fresh database, the others find them done.
    for (const dir of dataDirs) servers.push(await startServer(envOf(dir, database?.url ?? null)));
    const figures = await phases(servers, envOf(dataDirs[0], database?.url ?? null), database);
    return { database: mode, ...figures, load_average: { before: loadBefore, after: loadavg()[0] } };
  } finally {
    await Promise.all(servers.map(stopServer));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    await database?.drop().catch(() => undefined);
  }
}

const head = {
  bench: 'smtp', server: MAIN.join(' '), server_env: Object.entries(SERVER_ENV).map(([k, v]) => `${k}=${v}`).join(' '),
  connections: CONNECTIONS, client: CLIENT, messages: MESSAGES,
};
try {
  if (DATABASE === 'both') {
    const sqlite = await runMode('sqlite');
    // A PostgreSQL mode that fails (its mail path refusing, a server not starting) still leaves SQLite's figures printed.
    const postgres = await runMode('postgres').catch((err: Error) => ({ database: 'postgres', error: err.message.slice(0, 500) }));
    console.log(JSON.stringify({ ...head, database: 'both', sqlite, postgres }));
  } else {
    console.log(JSON.stringify({ ...head, ...(await runMode(DATABASE)) }));
  }
} finally {
  stopBenchPostgres();
}
