import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import pg from 'pg';

/**
 * A throw-away PostgreSQL cluster for tests: ONE per ava worker process (each test file runs in a
 * process of its own), started on first use, with its data and unix socket in a temporary folder,
 * no TCP listener, and fsync off (it holds nothing worth keeping). Each test gets a database of
 * its own. The cluster stops, and its folder goes, when the process exits.
 *
 * The benchmarks start theirs with `{ durable: true }` instead: fsync, synchronous commit and full
 * page writes on, and PostgreSQL's default 128 MB of shared buffers, as a production cluster runs,
 * so their figures count the WAL flush every commit waits for.
 */

/**
 * PostgreSQL's binaries as Debian installs them: 15 when present (what production is held to),
 * else the newest installed version; MAILSTEAD_TEST_PG_BIN points elsewhere.
 */
function findBin(): string {
  if (process.env.MAILSTEAD_TEST_PG_BIN) return process.env.MAILSTEAD_TEST_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).map(Number).sort((a, b) => a - b) : [];
  const version = versions.includes(15) ? 15 : versions.at(-1) ?? 15;
  return join(root, String(version), 'bin');
}
const BIN = findBin();
const START_TIMEOUT_MS = 60_000;

/** How the cluster of a process runs. */
export interface ClusterOptions {
  /** Every commit flushed to disk (fsync, synchronous_commit, full_page_writes on; 128 MB shared buffers): for benchmarks. */
  durable?: boolean;
}

interface Cluster {
  durable: boolean;
  dir: string;
  socketDir: string;
  server: ChildProcess;
  admin: pg.Pool;
}

let starting: Promise<Cluster> | null = null;
let startingDurable = false;
let running: Cluster | null = null;
let databaseSeq = 0;

/** The uid and gid of the `postgres` OS user: PostgreSQL refuses to run as root, and tests run as root. */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null; // an ordinary user runs the cluster as itself
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connects to the cluster's `postgres` database until it answers (it is still starting meanwhile). */
async function waitUntilReady(socketDir: string, server: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) {
      throw new Error(`postgres exited during start-up: ${readFileSync(log, 'utf8').slice(-2000)}`);
    }
    const client = new pg.Client({ host: socketDir, user: 'postgres', database: 'postgres' });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`postgres did not start in ${START_TIMEOUT_MS} ms: ${String(err)}`);
      await sleep(50);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Stops the cluster at once and removes its folder; synchronous, so it can run in an 'exit' handler. */
function stopCluster(): void {
  const c = running;
  if (!c) return;
  running = null;
  // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster ends its backends and exits.
  try { c.server.kill('SIGQUIT'); } catch { /* already gone */ }
  // The postmaster removes its pid file last; wait for it (bounded) so no process still writes.
  const pidFile = join(c.dir, 'data', 'postmaster.pid');
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 100 && existsSync(pidFile); i++) Atomics.wait(wait, 0, 0, 50);
  rmSync(c.dir, { recursive: true, force: true });
}

function onSignal(signal: NodeJS.Signals): void {
  stopCluster();
  process.kill(process.pid, signal); // the default action, now that this listener is gone
}

const CLUSTER_PREFIX = 'mailstead-pg-';

const alive = (pid: number) => {
  try { process.kill(pid, 0); return true; } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM'; }
};

/**
 * Stops and removes the clusters of test processes that died without their 'exit' handler (killed
 * by a signal that cannot be caught): each folder names its owner, and a dead owner's postmaster
 * is stopped here. Bounded: one pass over the temp folder.
 */
function sweepOrphanClusters(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(CLUSTER_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    try {
      const owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
      if (!owner || alive(owner)) continue;
      const pidFile = join(dir, 'data', 'postmaster.pid');
      const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
      if (postmaster && alive(postmaster)) process.kill(postmaster, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    } catch { /* not ours, being made, or already gone */ }
  }
}

/**
 * The server settings: the tests' cluster trades durability for speed (its data is thrown away);
 * the durable one keeps PostgreSQL's defaults for what a crash could lose.
 */
function settings(durable: boolean): string[] {
  const common = ['listen_addresses=', 'max_connections=200', 'log_min_messages=warning'];
  const speed = durable
    ? ['fsync=on', 'synchronous_commit=on', 'full_page_writes=on', 'shared_buffers=128MB']
    : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'shared_buffers=16MB'];
  return [...common, ...speed].flatMap((s) => ['-c', s]);
}

async function startCluster(durable: boolean): Promise<Cluster> {
  sweepOrphanClusters();
  if (!existsSync(join(BIN, 'initdb'))) {
    throw new Error(`PostgreSQL binaries not found in ${BIN} (install the postgresql package, or set MAILSTEAD_TEST_PG_BIN)`);
  }
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), CLUSTER_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const socketDir = join(dir, 'socket');
  mkdirSync(socketDir);
  if (user) for (const d of [dir, socketDir]) chownSync(d, user.uid, user.gid);
  const data = join(dir, 'data');
  // Trust authentication: the socket is in a folder only its owner (and root) can reach.
  const initdb = [join(BIN, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'];
  try {
    execFileSync(user ? 'runuser' : initdb[0]!, user ? ['-u', 'postgres', '--', ...initdb] : initdb.slice(1), { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
  }
  const log = join(dir, 'postgres.log');
  const logFd = openSync(log, 'a');
  if (user) chownSync(log, user.uid, user.gid);
  // Spawned directly under the postgres uid (rather than through runuser) so the child is the
  // postmaster itself and a signal sent to it reaches it.
  const server = spawn(join(BIN, 'postgres'), ['-D', data, '-k', socketDir, ...settings(durable)], { stdio: ['ignore', logFd, logFd], ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } });
  closeSync(logFd);
  server.unref(); // the cluster must not keep a finished test process alive: 'exit' stops it
  running = { durable, dir, socketDir, server, admin: null as unknown as pg.Pool };
  process.once('exit', stopCluster);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await waitUntilReady(socketDir, server, log);
  // allowExitOnIdle: an idle admin connection does not hold the process open either.
  running.admin = new pg.Pool({ host: socketDir, user: 'postgres', database: 'postgres', max: 2, allowExitOnIdle: true });
  running.admin.on('error', () => undefined);
  return running;
}

/**
 * The cluster of this process, started on first use; the first call decides whether it is durable,
 * and a later call asking for the other kind fails (one cluster per process).
 */
export function testCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const durable = opts.durable ?? false;
  if (starting && startingDurable !== durable) {
    return Promise.reject(new Error(`this process already runs a ${startingDurable ? 'durable' : 'test'} cluster`));
  }
  startingDurable = durable;
  starting ??= startCluster(durable).catch((err) => { starting = null; stopCluster(); throw err; });
  return starting;
}

/** Stops this process's cluster now and removes its folder (otherwise that happens at exit). */
export function stopTestCluster(): void {
  starting = null;
  stopCluster();
}

/** The URL of a database on the cluster (a unix socket: `host` names its folder). */
export function databaseUrl(cluster: Cluster, database: string): string {
  return `postgres://postgres@localhost/${database}?host=${encodeURIComponent(cluster.socketDir)}`;
}

/**
 * A new, empty database for one test, dropped after it (a test's teardowns run last-registered
 * first, so a server started later in the test is stopped by then; FORCE ends what is left).
 */
export async function freshPostgresDatabase(t: ExecutionContext): Promise<string> {
  const cluster = await testCluster();
  const name = `test_${process.pid}_${++databaseSeq}`;
  await cluster.admin.query(`CREATE DATABASE ${name}`);
  t.teardown(async () => {
    if (running === cluster) await cluster.admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return databaseUrl(cluster, name);
}

/** Whether the tests of this run use PostgreSQL (the second lane of `npm test`). */
export const onPostgres = process.env.MAILSTEAD_TEST_DATABASE === 'postgres';
