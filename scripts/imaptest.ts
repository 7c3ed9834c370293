/**
 * Dovecot's imaptest against Mailstead (and, with --dovecot, against Debian's Dovecot in the same
 * run): boots the server (the build when current, else the sources), provisions two mailboxes with
 * one password, builds imaptest (../shared/tools/imaptest/build.sh; Debian packages only), runs every
 * scripted test (run-scripts.sh) and, with --stress=SECS, imaptest's stress with checks on (10
 * clients) in two profiles: imaptest's default and a search and copy heavy one. Prints one JSON line:
 * pass/fail/skip counts, the failing scripts, and per profile the stress figures of each server side
 * by side with Mailstead's command count as a ratio of Dovecot's. The raw protocol of a failure is in OUT/<server>/<script>.log.
 *
 * Usage: node --import tsx scripts/imaptest.ts [--out=DIR] [--dovecot] [--stress=60] [--tools=DIR] [--main=FILE] [--no-scripts]
 *        (--no-scripts: only the login burst and the stress)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cli, ROOT } from './bench/email-bench-server.js';
import { DOVECOT_PASSWORD, DOVECOT_USER, startDovecot } from './bench/dovecot.js';
import { startImapBenchServer } from './imaptest-server.js';
import { RawImap } from './bench/imap-client.js';

const { values } = parseArgs({ options: { out: { type: 'string' }, dovecot: { type: 'boolean' }, stress: { type: 'string' }, tools: { type: 'string' }, main: { type: 'string' }, 'no-scripts': { type: 'boolean' } } });
const TOOLS = resolve(values.tools ?? join(ROOT, '..', 'shared', 'tools', 'imaptest'));
const OUT = resolve(values.out ?? mkdtempSync(join(tmpdir(), 'imaptest-out-')));
const STRESS_SECS = values.stress ? Number(values.stress) : 0;
const DOMAIN = 'imaptest.test';
const PASSWORD = 'imaptest-password-2026';

/** Runs a command to its end; resolves with its stdout. */
function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => (code === 0 ? res(out) : rej(new Error(`${cmd} exited ${code}: ${err.slice(-800)}`))));
  });
}

interface Target { host: string; port: number; user: string; user2: string; pass: string }

/** The scripted tests against one server: counts and the names of the failing scripts. */
async function scripts(bin: string, name: string, t: Target) {
  const dir = join(OUT, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const out = await run(join(TOOLS, 'run-scripts.sh'), [bin, dir, `host=${t.host}`, `port=${t.port}`, 'ssl=any-cert', `user=${t.user}`, `user2=${t.user2}`, `pass=${t.pass}`]);
  const totals = /(\d+) passed, (\d+) failed, (\d+) skipped/.exec(out);
  const failing = out.split('\n').filter((l) => /\s(FAIL|TIMEOUT|ERROR)/.test(l)).map((l) => l.split(/\s+/)[0]);
  return { pass: Number(totals?.[1] ?? 0), fail: Number(totals?.[2] ?? 0), skip: Number(totals?.[3] ?? 0), failing, output: join(dir) };
}

/** The stress profiles of issue 46: imaptest's default mix, and one where SEARCH and COPY dominate. */
const PROFILES: Record<string, string[]> = { default: [], search_copy: ['copybox=INBOX', 'search=100', 'copy=100', 'fetch=30', 'store=20'] };

/** imaptest's stress with checks on: 10 clients for STRESS_SECS; commands done and protocol errors. */
async function stress(bin: string, name: string, t: Target, profile: string) {
  const mbox = join(bin, '..', 'tests', 'default.mbox');
  const res = spawnSync(bin, [`host=${t.host}`, `port=${t.port}`, 'ssl=any-cert', `user=${t.user}`, `pass=${t.pass}`, `mbox=${mbox}`, 'clients=10', `secs=${STRESS_SECS}`, ...PROFILES[profile]],
    { env: { ...process.env, LD_LIBRARY_PATH: '/usr/lib/dovecot' }, encoding: 'utf8', timeout: (STRESS_SECS + 60) * 1000, maxBuffer: 64 * 1024 * 1024 });
  const text = `${res.stdout ?? ''}${res.stderr ?? ''}`;
  const logFile = join(OUT, `${name}-stress-${profile}.log`);
  mkdirSync(OUT, { recursive: true });
  spawnSync('sh', ['-c', `cat > '${logFile}'`], { input: text });
  // After "Totals:": command names, percentages, then the counts of each command.
  const lines = text.trim().split('\n');
  const totalAt = lines.findIndex((l) => /^Totals:/.test(l));
  const countLine = totalAt >= 0 ? lines.slice(totalAt + 1).find((l) => /^\s*\d+(\s+\d+)+\s*$/.test(l)) : undefined;
  const counts = (countLine ?? '').trim().split(/\s+/).filter(Boolean).map(Number);
  const errors = lines.filter((l) => /^Error: /.test(l)).length;
  return { commands: counts.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0), errors, log: logFile };
}

/**
 * Issue 46's login figure: LOGIN_CLIENTS clients log in at once, LOGIN_ROUNDS times after one
 * unmeasured round (their first login, which pays the password hash); p50/p99 of the LOGIN command's
 * time from sending it to its tagged OK (the TLS handshake before it is not counted).
 */
const LOGIN_CLIENTS = 10;
const LOGIN_ROUNDS = 10;
async function loginBurst(t: Target) {
  const quote = (s: string) => `"${s.replace(/(["\\])/g, '\\$1')}"`;
  const times: number[] = [];
  for (let round = 0; round <= LOGIN_ROUNDS; round++) {
    const conns = await Promise.all(Array.from({ length: LOGIN_CLIENTS }, () => RawImap.open(t.port)));
    const took = await Promise.all(conns.map(async (c, i) => {
      const start = performance.now();
      const reply = await c.cmd(`LOGIN ${quote(i % 2 ? t.user2 : t.user)} ${quote(t.pass)}`, 60_000);
      if (!/ OK/.test(reply.split('\r\n').filter(Boolean).pop() ?? '')) throw new Error(`login refused: ${reply.slice(-200)}`);
      return performance.now() - start;
    }));
    await Promise.all(conns.map((c) => c.close()));
    if (round > 0) times.push(...took);
  }
  const sorted = times.sort((a, b) => a - b);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) / 10;
  return { clients: LOGIN_CLIENTS, rounds: LOGIN_ROUNDS, p50_ms: at(50), p99_ms: at(99), max_ms: at(100) };
}

const built = (await run(join(TOOLS, 'build.sh'), [join(tmpdir(), 'imaptest')])).trim().split('\n').pop()!;
const result: Record<string, unknown> = { bench: 'imaptest' };
const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-imaptest-'));
const server = await startImapBenchServer(dataDir, values.main);
let dovecot: Awaited<ReturnType<typeof startDovecot>> | null = null;
try {
  await cli(dataDir, ['tenant', 'create', 'imaptest', '--plan', 'active']);
  const key = await cli(dataDir, ['key', 'create', '--tenant', 'imaptest', '--perms', 'read,write']);
  const users = [`user1@${DOMAIN}`, `user2@${DOMAIN}`];
  await server.provision(key, DOMAIN, users, PASSWORD);
  const ours: Target = { host: '127.0.0.1', port: server.ports.imap, user: users[0], user2: users[1], pass: PASSWORD };
  result.login = await loginBurst(ours);
  if (!values['no-scripts']) result.mailstead = await scripts(built, 'mailstead', ours);
  if (values.dovecot) {
    const dir = mkdtempSync(join(tmpdir(), 'dovecot-imaptest-'));
    dovecot = await startDovecot(dir, ['user2']);
    const theirs: Target = { host: '127.0.0.1', port: dovecot.port, user: DOVECOT_USER, user2: 'user2', pass: DOVECOT_PASSWORD };
    if (!values['no-scripts']) result.dovecot = await scripts(built, 'dovecot', theirs);
  }
  if (STRESS_SECS) {
    const side: Record<string, unknown> = {};
    for (const profile of Object.keys(PROFILES)) {
      const ms = await stress(built, 'mailstead', ours, profile);
      const dc = dovecot ? await stress(built, 'dovecot', { host: '127.0.0.1', port: dovecot.port, user: DOVECOT_USER, user2: 'user2', pass: DOVECOT_PASSWORD }, profile) : null;
      side[profile] = { mailstead: ms, dovecot: dc, ratio: dc && dc.commands ? Number((ms.commands / dc.commands).toFixed(2)) : null };
    }
    result.stress = side;
  }
  // A look at the server's log file is the first step for a failure: keep its place.
  result.server_log_lines = readFileSync(server.logFile, 'utf8').split('\n').filter((l) => /"level":(50|60)/.test(l)).slice(-5);
} finally {
  await dovecot?.stop();
  await server.stop();
}
console.log(JSON.stringify(result));
