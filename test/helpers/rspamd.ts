import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from './app.js';
import { fixedPort } from './ports.js';
import { lastCheck } from './poll.js';

/** Debian's rspamd (.ci/run installs it). */
export const RSPAMD = '/usr/bin/rspamd';

/** The subject words our test rule scores: each pushes a message to one of rspamd's actions. */
export const RSPAMD_TRIGGERS = { reject: 'RSPAMD-TEST-REJECT', greylist: 'RSPAMD-TEST-GREYLIST', addHeader: 'RSPAMD-TEST-JUNK' } as const;

/**
 * The configuration: the package's own rules and modules (CONFDIR /etc/rspamd), our workers on
 * free loopback ports, DNS at `dns` with short timeouts, Bayes on SQLite files instead of Redis
 * (so the controller can learn), actions at fixed scores, and three rules that score our trigger
 * subjects so a test can reach each action on purpose.
 */
function writeConfig(dir: string, ports: { normal: number; controller: number }, password: string, dns: string) {
  for (const sub of ['local.d', 'override.d', 'db', 'run', 'log']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, 'rspamd.conf'), `
.include "$CONFDIR/common.conf"
options {
  pidfile = "$RUNDIR/rspamd.pid";
  .include "$CONFDIR/options.inc"
  dns { nameserver = ["${dns}"]; timeout = 0.3s; retransmits = 1; }
  # Compiling Hyperscan databases is most of a cold start (a fresh directory each time has no cache).
  disable_hyperscan = true;
}
logging { type = "file"; filename = "$LOGDIR/rspamd.log"; level = "info"; }
worker "normal" { bind_socket = "127.0.0.1:${ports.normal}"; mime = true; count = 1; }
worker "controller" { bind_socket = "127.0.0.1:${ports.controller}"; count = 1; password = "${password}"; static_dir = "\${WWWDIR}"; }
`);
  writeFileSync(join(dir, 'local.d', 'actions.conf'), 'reject = 15; add_header = 6; greylist = 4; rewrite_subject = null;\n');
  writeFileSync(join(dir, 'local.d', 'classifier-bayes.conf'), `
backend = "sqlite3";
min_learns = 1;
statfile { symbol = "BAYES_HAM"; spam = false; path = "$DBDIR/bayes.ham.sqlite"; }
statfile { symbol = "BAYES_SPAM"; spam = true; path = "$DBDIR/bayes.spam.sqlite"; }
`);
  const rule = (name: string, words: string, score: number) => `rspamd_config.${name} = {
  callback = function(task) local s = task:get_header('Subject') or ''; return s:find('${words}', 1, true) ~= nil end,
  score = ${score}, description = 'Mailstead test trigger' }\n`;
  writeFileSync(join(dir, 'rspamd.local.lua'),
    rule('MAILSTEAD_TEST_REJECT', RSPAMD_TRIGGERS.reject, 100) + rule('MAILSTEAD_TEST_GREYLIST', RSPAMD_TRIGGERS.greylist, 4.5) + rule('MAILSTEAD_TEST_JUNK', RSPAMD_TRIGGERS.addHeader, 8));
}

/** A running rspamd: its normal worker's and controller's base URLs and the controller password. */
export interface Rspamd {
  url: string;
  controllerUrl: string;
  password: string;
  /** The end of its log (info level: what it learned shows there). */
  log(): string;
  /** Stops it now (also done after the test). */
  stop(): Promise<void>;
}

/**
 * Starts rspamd on free 127.0.0.1 ports with a temporary configuration and data directory (no
 * Redis: rule-based checks, Bayes on SQLite), waits until both workers answer /ping (bounded:
 * loading the rules takes seconds on a busy machine), and stops it after the test.
 */
export async function startRspamd(t: ExecutionContext, o: { dns?: string; timeoutMs?: number } = {}): Promise<Rspamd> {
  if (!existsSync(RSPAMD)) throw new Error(`${RSPAMD} is missing: install Debian's rspamd (.ci/run does)`);
  // A port picked free may be taken before rspamd binds it (it then stops with a fatal error): one more try on new ports.
  try {
    return await startOnce(t, o);
  } catch (err) {
    t.log(`rspamd did not start, trying once more on other ports: ${(err as Error).message.slice(-600)}`);
    return startOnce(t, o);
  }
}

async function startOnce(t: ExecutionContext, o: { dns?: string; timeoutMs?: number }): Promise<Rspamd> {
  const dir = tempDir(t, 'mailstead-rspamd-');
  const ports = { normal: await fixedPort(), controller: await fixedPort() };
  const password = 'rspamd-test-password';
  writeConfig(dir, ports, password, o.dns ?? '127.0.0.1:1');
  const child = spawn(RSPAMD, ['-f', '-i', '-c', join(dir, 'rspamd.conf'),
    '--var=CONFDIR=/etc/rspamd', `--var=LOCAL_CONFDIR=${dir}`, `--var=DBDIR=${join(dir, 'db')}`, `--var=RUNDIR=${join(dir, 'run')}`, `--var=LOGDIR=${join(dir, 'log')}`],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-4000); });
  child.stderr!.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-4000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  t.teardown(stop);

  const log = () => {
    const file = join(dir, 'log', 'rspamd.log');
    return `${output}\n${existsSync(file) ? readFileSync(file, 'utf8').slice(-20_000) : ''}`;
  };
  const url = `http://127.0.0.1:${ports.normal}`;
  const controllerUrl = `http://127.0.0.1:${ports.controller}`;
  const deadline = Date.now() + (o.timeoutMs ?? 90_000);
  for (const base of [url, controllerUrl]) {
    const pong = await lastCheck(() => fetch(`${base}/ping`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text(), () => ''),
      { timeoutMs: Math.max(0, deadline - Date.now()), everyMs: 200, done: (p) => p.includes('pong') || child.exitCode !== null });
    if (!pong.includes('pong')) {
      await stop();
      throw new Error(`rspamd did not start: ${log()}`);
    }
  }
  return { url, controllerUrl, password, log, stop };
}
