import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ENV } from '../helpers/app.js';
import { quietDns } from '../helpers/dns.js';
import { ROOT } from '../helpers/process.js';
import { lastCheck } from '../helpers/poll.js';

// `npm start` as an ordinary user: the IMAP and submission defaults (993, 143, 587, 465) are
// privileged ports. The process must still serve HTTP and SMTP and say which variable to set.
// Run as root (CI), the server is started as `nobody` through setpriv so the ports really are denied.
test('without the right to bind privileged ports, IMAP and submission stay off with a warning naming the variable; HTTP and SMTP serve', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-priv-'));
  chmodSync(dataDir, 0o777);
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const root = process.getuid?.() === 0;
  const node = [process.execPath, '--import', 'tsx', 'src/main.ts'];
  const [cmd, ...args] = root ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', ...node] : node;
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    env: {
      ...process.env, ...TEST_ENV, MAILSTEAD_DNS_SERVERS: await quietDns(), MAILSTEAD_LOG_LEVEL: 'info', MAILSTEAD_DATA_DIR: dataDir,
      MAILSTEAD_IMAP_PORT: '993', MAILSTEAD_IMAP_STARTTLS_PORT: '143', MAILSTEAD_SUBMISSION_PORT: '587', MAILSTEAD_SUBMISSIONS_PORT: '465',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { child.kill('SIGKILL'); });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return {}; } });
  await lastCheck(() => lines().some((l) => l.smtp_port) || child.exitCode !== null, { timeoutMs: 45_000, everyMs: 100 });
  const http = lines().find((l) => l.http_port)?.http_port;
  t.truthy(lines().find((l) => l.smtp_port), `the server started: ${out}`);
  const health = await fetch(`http://127.0.0.1:${String(http)}/api/health`);
  t.is(health.status, 200);
  const warned = lines().filter((l) => typeof l.msg === 'string' && (l.msg as string).includes('is not listening'));
  t.deepEqual(warned.map((l) => l.variable).sort(), ['MAILSTEAD_IMAP_PORT', 'MAILSTEAD_IMAP_STARTTLS_PORT', 'MAILSTEAD_SUBMISSIONS_PORT', 'MAILSTEAD_SUBMISSION_PORT']);
  t.false(lines().some((l) => l.imap_port || l.submission_port), 'no listener claims a port it does not hold');
  child.kill('SIGTERM');
  t.is(await exited, 0);
});
