/**
 * The cost of Sieve at delivery (DECISIONS.md section 19, issue 48): SMTP acknowledged and end to end
 * rates with no script, with a 50-rule active script on every mailbox (the bench's one
 * recipient), and with none again, in the same run on the same server (scripts/bench/smtp-load.ts machinery). The target
 * is a ratio of at least 0.9 for both. Prints one JSON line.
 *
 * Usage: node --import tsx scripts/bench/sieve-delivery.ts [--warmup=2] [--seconds=10] [--connections=10]
 * BENCH_MAIN=path/to/main.js runs that build instead (a copy of an earlier dist/, to compare
 * before and after in turn on the same host).
 * Bounded: every phase has its duration and every wait a deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { benchEnv, cli, ROOT, serverArgs, startEnv } from './email-bench-server.js';
import { DOMAIN, load, RCPT } from './smtp-load.js';

const { values } = parseArgs({ options: { warmup: { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } } });
const WARMUP = Number(values.warmup ?? 2);
const SECONDS = Number(values.seconds ?? 10);
const CONNECTIONS = Number(values.connections ?? 10);

/** 50 rules that never match the bench's mail (every test is evaluated), then an implicit keep. */
const SCRIPT = ['require ["fileinto", "imap4flags", "envelope", "mailbox"];',
  ...Array.from({ length: 50 }, (_, i) => `if anyof (header :contains "subject" "rule-${i}-nomatch", address :is "from" "nobody${i}@nowhere.example") { fileinto :create "Rule${i}"; stop; }`),
].join('\n');

/** The server (as `npm start` runs it) on `dataDir`, once it logged its HTTP and SMTP ports (60 s at most). */
function startServer(dataDir: string): Promise<{ base: string; smtpPort: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, serverArgs(process.env.BENCH_MAIN || undefined), { cwd: ROOT, env: { ...process.env, ...startEnv(), ...benchEnv(dataDir) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('server did not start')); }, 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const http = /"http_port":(\d+)/.exec(out);
      const smtp = /"smtp_port":(\d+)/.exec(out);
      if (!http || !smtp) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      resolve({
        base: `http://127.0.0.1:${http[1]}/api`, smtpPort: Number(smtp[1]),
        async stop() { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]); child.kill('SIGKILL'); },
      });
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}`)); });
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-bench-sieve-'));
const server = await startServer(dataDir);
try {
  await cli(dataDir, ['tenant', 'create', 'bench', '--plan', 'active']);
  const key = await cli(dataDir, ['key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
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
  await waitTask('/v1/get/mailbox/single', (await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench Inbox', single_bulk: 'single', Domain: DOMAIN, Params: { email_id: RCPT, password: 0 } })).body.task_id);
  const smtpPort = server.smtpPort;

  /** When the message with this subject is listed, in ms after `from` (null: not within 120 s). */
  const listedAfter = async (subject: string, from: number) => {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const page = await call('GET', '/v1/emails?per_page=100');
      if (page.body.data?.some((e: any) => e.subject === subject)) return performance.now() - from;
      await new Promise((res) => setTimeout(res, 100));
    }
    return null;
  };
  const phase = async (tag: string, seconds: number) => {
    const r = await load({ ports: [smtpPort], connections: CONNECTIONS, client: 'lean', seconds, tag, attachment: null });
    const after = await listedAfter(`${tag} ${r.lastIndex}`, r.started);
    return { acked: r.acked, acked_per_s: r.rate, p99_ms: r.p99, end_to_end_per_s: after ? Math.round(r.acked / (after / 1000)) : null };
  };

  if (WARMUP > 0) await phase('warm', WARMUP);
  const none = await phase('none', SECONDS);
  const put = await call('PUT', `/v1/mailboxes/${encodeURIComponent(RCPT)}/sieve/bench`, { script: SCRIPT, active: true });
  if (put.status !== 200) throw new Error(`PUT script: ${put.status} ${JSON.stringify(put.body)}`);
  const scripted = await phase('sieve', SECONDS);
  // Without the script once more: the ratio is against both runs without, so a server still warming
  // up (or a neighbour's load) weighs on both sides alike.
  if ((await call('POST', `/v1/mailboxes/${encodeURIComponent(RCPT)}/sieve/deactivate`)).status !== 200) throw new Error('deactivate failed');
  const noneAgain = await phase('none2', SECONDS);
  const mean = (a: number | null, b: number | null) => (a && b ? (a + b) / 2 : null);
  const ratio = (a: number | null, b: number | null) => (a && b ? Math.round((a / b) * 100) / 100 : null);
  console.log(JSON.stringify({
    bench: 'sieve-delivery', connections: CONNECTIONS, seconds: SECONDS, rules: 50, none, sieve: scripted, none_again: noneAgain,
    acked_ratio: ratio(scripted.acked_per_s, mean(none.acked_per_s, noneAgain.acked_per_s)),
    end_to_end_ratio: ratio(scripted.end_to_end_per_s, mean(none.end_to_end_per_s, noneAgain.end_to_end_per_s)),
  }));
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
