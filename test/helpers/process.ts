import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_ENV } from './app.js';
import { quietDns } from './dns.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the admin CLI (bin/mailstead.js) on a data dir; resolves with exit code and output. */
export function runCli(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/mailstead.js', ...args], {
      cwd: ROOT, env: { ...process.env, ...TEST_ENV, MAILSTEAD_DATA_DIR: dataDir, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A server running as a child process, the way `npm start` runs it (tests of crashes and signals). */
export interface ServerProcess {
  child: ChildProcess;
  httpPort: number;
  smtpPort: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) once it exits. */
  exited: Promise<number | string>;
}

/** Starts `src/main.ts` on ports 0 and resolves once both ports were logged. */
export async function startServerProcess(dataDir: string, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ServerProcess> {
  const dns = await quietDns();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT, env: { ...process.env, ...TEST_ENV, MAILSTEAD_DNS_SERVERS: dns, MAILSTEAD_LOG_LEVEL: 'info', MAILSTEAD_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    let httpPort = 0;
    let smtpPort = 0;
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out}`)); }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d;
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const j = JSON.parse(line);
          if (j.http_port) httpPort = j.http_port;
          if (j.smtp_port) smtpPort = j.smtp_port;
        } catch { /* partial line */ }
      }
      if (httpPort && smtpPort) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.on('data', (more) => { out += more; });
        resolve({ child, httpPort, smtpPort, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => { out += d; });
    void exited.then((code) => { clearTimeout(timer); if (!httpPort || !smtpPort) reject(new Error(`server exited ${code}: ${out}`)); });
  });
}

/**
 * A tiny API client for a server running as a child process: `call` answers status and JSON body,
 * `poll` asks a task's poll endpoint until it leaves queued / running (within `deadlineMs`).
 */
export function processApi(port: number, key: string, { deadlineMs = 20_000, everyMs = 20 }: { deadlineMs?: number; everyMs?: number } = {}) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}/api${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };
  const poll = async (path: string, taskId: number) => {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const r = await call('GET', `${path}?task_id=${taskId}`);
      if (!['queued', 'running'].includes(r.body.status)) return r;
      if (Date.now() > deadline) throw new Error(`task ${taskId} not done`);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  };
  return { call, poll };
}

/**
 * The server's `mailstead_ingest_backlog_messages` gauge (SMTP mail acknowledged and not yet stored,
 * read at the scrape): 0 once everything it acknowledged, or found in its journal and queue at
 * start, is stored. Tests wait for it rather than for a listing to stop growing for a while.
 */
export async function ingestBacklog(httpPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const line = /^mailstead_ingest_backlog_messages (\S+)$/m.exec(text);
  if (!line) throw new Error('no mailstead_ingest_backlog_messages in /metrics');
  return Number(line[1]);
}
