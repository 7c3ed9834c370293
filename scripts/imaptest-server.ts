/**
 * The server scripts/imaptest.ts tests: src/main.ts as a child process (rate limits off, loopback
 * only, see bench/email-bench-server.ts), its log kept in a file, and the REST calls that make a
 * domain and mailboxes with a password.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { benchEnv, ROOT, serverArgs, startEnv } from './bench/email-bench-server.js';

export async function startImapBenchServer(dataDir: string, main?: string) {
  const logFile = join(dataDir, 'server.log');
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, serverArgs(main), { cwd: ROOT, env: { ...process.env, ...startEnv(), ...benchEnv(dataDir) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ports = await new Promise<{ http: number; imap: number }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out.slice(-500)}`)); }, 60_000);
    const onData = (d: Buffer) => {
      out += d;
      const [http, imap] = ['http_port', 'imap_port'].map((k) => Number(new RegExp(`"${k}":(\\d+)`).exec(out)?.[1] ?? 0));
      if (!http || !imap) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({ http, imap });
    };
    child.stdout!.on('data', onData);
    child.stdout!.pipe(log);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${out.slice(-500)}`)); });
  });
  const base = `http://127.0.0.1:${ports.http}/api`;
  return {
    ports, logFile,
    /** A domain and mailboxes with one password, made through the REST API (its tasks waited for). */
    async provision(key: string, domain: string, addresses: string[], password: string) {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
        return await res.json() as { task_id?: number; status?: string };
      };
      const waitTask = async (path: string, id: number | undefined) => {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const r = await call('GET', `${path}?task_id=${id}`);
          if (r.status === 'completed') return;
          if (!['queued', 'running'].includes(r.status ?? '') || Date.now() > deadline) throw new Error(`task ${path}: ${JSON.stringify(r)}`);
          await new Promise((res) => setTimeout(res, 50));
        }
      };
      await waitTask('/v1/get/domain', (await call('POST', '/v1/create/domain', { Domain: domain })).task_id);
      for (const address of addresses) {
        await waitTask('/v1/get/mailbox/single', (await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'imaptest', single_bulk: 'single', Domain: domain, Params: { email_id: address, password } })).task_id);
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      child.kill('SIGKILL');
    },
  };
}
