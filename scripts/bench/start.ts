/**
 * How long `npm start` takes until /api/health answers, and how long one CLI call takes (issue 44).
 * A throw-away copy of the checkout (src, bin, config, web, package files, tsconfigs; node_modules
 * linked, as after `npm ci`) without dist/ is started four times on one fresh data dir:
 *   first   — nothing built yet: the whole compile, then the server's first start (certificate, migrations);
 *   second  — nothing changed: `tsc -b` finds the build up to date;
 *   changed — a source imported by most others edited: the first incremental rebuild after a fresh
 *             build re-checks every file that imports it (tsc has no signatures of them yet);
 *   changed again — the same file edited again: the incremental rebuild proper;
 * and between them `mailstead tenant create` is timed from the build (current) and from the sources
 * through tsx (a source changed since the build). Prints one JSON line. Not a test: run it on a quiet
 * machine. Bounded: each start is given START_DEADLINE_MS, each CLI call CLI_DEADLINE_MS.
 */
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkoutCopy } from '../checkout-copy.js';

const START_DEADLINE_MS = 180_000;
const CLI_DEADLINE_MS = 60_000;
const run = promisify(execFile);

const copy = checkoutCopy('mailstead-start-bench-');
const checkout = copy.dir;
const dataDir = join(checkout, 'data');

const env = {
  ...process.env,
  MAILSTEAD_DATA_DIR: dataDir,
  // Port 0: the server logs the port it got, so the health check cannot reach another process's server.
  MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0',
  MAILSTEAD_SMTP_HOST: '127.0.0.1', MAILSTEAD_SMTP_PORT: '0',
  MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0',
  MAILSTEAD_HOSTNAME: 'mx.bench.example', MAILSTEAD_MX_HOSTS: 'mx1.bench.example,mx2.bench.example',
  // Nothing answers there: start-up need not wait for the host's resolver.
  MAILSTEAD_DNS_SERVERS: '127.0.0.1:1',
  MAILSTEAD_LOG_LEVEL: 'info',
};

async function healthy(httpPort: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${httpPort}/api/health`)).status === 200;
  } catch {
    return false;
  }
}

/** Whether any process of the group `pgid` is still running. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Linux's clock ticks per second, the unit of CPU times in /proc/PID/stat (`getconf CLK_TCK`). */
const TICKS_PER_S = 100;

/**
 * CPU milliseconds (user and system) spent so far by the processes of group `pgid`, with the children
 * they have waited for (the tsc that npm ran before the server): the load on the host stretches wall
 * times many-fold, CPU times much less.
 */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { continue; }
    // Fields after the command's closing parenthesis: state, ppid, pgrp, ..., utime (14), stime, cutime, cstime.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1000) / TICKS_PER_S;
}

/** Runs `npm start` in the copy until /api/health answers 200; answers the wall and CPU milliseconds that took, then stops it. */
async function timedStart(): Promise<{ wall: number; cpu: number }> {
  const started = performance.now();
  // Its own process group (npm, its shell, node), so that all of it can be stopped together.
  const child = spawn('npm', ['start'], { cwd: checkout, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += d; });
  // The port from the log line "http listening" ({"http_port": n}).
  let httpPort = 0;
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
    if (!httpPort) httpPort = Number(/"http_port":(\d+)/.exec(out)?.[1] ?? 0);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let gone = false;
  void exited.then(() => { gone = true; });
  try {
    for (;;) {
      if (httpPort && (await healthy(httpPort))) return { wall: performance.now() - started, cpu: groupCpuMs(child.pid!) };
      if (gone) throw new Error(`npm start exited before answering: ${stderr}`);
      if (performance.now() - started > START_DEADLINE_MS) throw new Error('npm start did not answer /api/health in time');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    if (!gone) process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // The next start opens the same data dir: wait until the whole group (the server shuts down
    // after npm) is gone, for at most 15 s.
    for (let i = 0; i < 600 && groupAlive(child.pid!); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let tenants = 0;
/** One `mailstead tenant create` on the data dir; answers its milliseconds. */
async function timedCli(): Promise<number> {
  const started = performance.now();
  const { stdout } = await run(process.execPath, [join(checkout, 'bin', 'mailstead.js'), 'tenant', 'create', `bench${++tenants}`], { cwd: checkout, env, timeout: CLI_DEADLINE_MS });
  if (!/^\d+\n$/.test(stdout)) throw new Error(`unexpected CLI output ${JSON.stringify(stdout)}`);
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => Math.round(x);

try {
  const load = [loadavg()[0]];
  const first = await timedStart();
  const second = await timedStart();
  const cliBuilt = [await timedCli(), await timedCli(), await timedCli()];
  // An edit after the build: the CLI falls back to the sources until the next build.
  appendFileSync(join(checkout, 'src', 'clock.ts'), '// edited by the start benchmark\n');
  const cliSources = await timedCli();
  const changed = await timedStart();
  const cliRebuilt = await timedCli();
  appendFileSync(join(checkout, 'src', 'clock.ts'), '// edited again\n');
  const changedAgain = await timedStart();
  load.push(loadavg()[0]);
  console.log(JSON.stringify({
    bench: 'start',
    first_start_ms: ms(first.wall),
    second_start_ms: ms(second.wall),
    changed_start_ms: ms(changed.wall),
    changed_again_start_ms: ms(changedAgain.wall),
    cpu_ms: { first: ms(first.cpu), second: ms(second.cpu), changed: ms(changed.cpu), changed_again: ms(changedAgain.cpu) },
    cli_ms: ms(median(cliBuilt)),
    cli_each_ms: cliBuilt.map(ms),
    cli_after_rebuild_ms: ms(cliRebuilt),
    cli_from_sources_ms: ms(cliSources),
    load_average: load.map((l) => Math.round(l * 10) / 10),
  }));
} finally {
  copy.remove();
}
