/**
 * Shared by the email benchmarks: runs `src/main.ts` as a child process (so the load generator
 * does not share its event loop), with rate limits off, and reads its port from the log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quietDns } from '../../test/helpers/dns.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Mail authentication and DNS checks ask a real local DNS server that answers at once (NXDOMAIN).
const dnsServers = await quietDns();

/** The environment of a benchmark server on `dataDir`. */
export const benchEnv = (dataDir: string): Record<string, string> => ({
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0', MAILSTEAD_LOG_LEVEL: 'info', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
  MAILSTEAD_HOSTNAME: 'bench.mailstead.test', MAILSTEAD_DNS_SERVERS: dnsServers,
});

/** A running server child. */
export interface BenchServer {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/**
 * Starts the server on `dataDir` (the build when it is current, as `npm start` runs it; see
 * serverArgs) and resolves once it logged its HTTP port (60 s at most).
 */
export function startServer(dataDir: string, main?: string): Promise<BenchServer> {
  const child = spawn(process.execPath, serverArgs(main), {
    cwd: ROOT, env: { ...process.env, ...startEnv(), ...benchEnv(dataDir) }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out.slice(-500)}`)); }, 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (out === null) return;
      out += d;
      const m = /"http_port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        out = '';
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({
          child, base: `http://127.0.0.1:${m[1]}/api`,
          async stop() { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]); child.kill('SIGKILL'); },
        });
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${out.slice(-500)}`)); });
  });
}

/** Runs the admin CLI on `dataDir` and returns its stdout (throws on a non-zero exit). */
export function cli(dataDir: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/mailstead.js', ...args], { cwd: ROOT, env: { ...process.env, ...benchEnv(dataDir) } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => (code === 0 ? resolve(stdout.trim()) : reject(new Error(`cli ${args.join(' ')}: ${stderr}`))));
  });
}

/**
 * CPU milliseconds (user + system) a process has used so far, in all its threads and in its main
 * thread alone, from /proc (Linux); null elsewhere. Steadier than rates on a shared machine.
 */
export function processCpuMs(pid: number): { total: number; main: number } | null {
  const ticks = (file: string) => {
    const fields = readFileSync(file, 'utf8').replace(/^.*\) /, '').split(' ');
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the "pid (comm) " prefix; 100 ticks a second.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  try {
    return { total: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return null;
  }
}

/** The built server, what `npm start` runs (parser and reader threads). */
export const BUILT_MAIN = join(ROOT, 'dist', 'src', 'main.js');

/**
 * Whether the build is at least as new as every source file (a stale build is not measured). The
 * newest file of dist/src counts, not main.js: tsc leaves an output alone when it would not change.
 */
function builtIsCurrent(): boolean {
  if (!existsSync(BUILT_MAIN)) return false;
  const newest = (dir: string): number => readdirSync(dir, { withFileTypes: true })
    .reduce((m, e) => Math.max(m, e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs), 0);
  return newest(join(ROOT, 'dist', 'src')) >= newest(join(ROOT, 'src'));
}

/** `npm start`'s command (package.json `scripts.start`: `[NAME=value ...] node <flags> dist/src/main.js`), in words. */
function startWords(): { env: Record<string, string>; flags: string[] } {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.trim().split(/\s+/);
  const node = words.indexOf('node');
  return { env: assignments(words.slice(0, Math.max(node, 0))), flags: node >= 0 ? words.slice(node + 1, -1) : [] };
}

/** `NAME=value` words as an environment. */
export const assignments = (words: string[]): Record<string, string> =>
  Object.fromEntries(words.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));

/**
 * The node flags `npm start` gives the server (the Dockerfile's CMD carries the same ones): the
 * benchmarks measure the server as it is deployed.
 */
export const startFlags = (): string[] => startWords().flags;

/** The environment variables `npm start` sets for the server (the Dockerfile's ENV sets them too). */
export const startEnv = (): Record<string, string> => startWords().env;

/**
 * The server's node arguments: npm start's flags, then BENCH_NODE_ARGS (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof"; after npm start's, so a flag given there wins), then `main` when
 * given, else the build when it is current, else the sources through tsx.
 */
export const serverArgs = (main?: string): string[] => [
  ...startFlags(), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ...(main ? [main] : builtIsCurrent() ? [BUILT_MAIN] : ['--import', 'tsx', 'src/main.ts']),
];
