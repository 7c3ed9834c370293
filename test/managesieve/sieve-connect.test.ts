import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';

const SIEVE_CONNECT = '/usr/bin/sieve-connect';

/** Runs Debian's sieve-connect against the server (STARTTLS, PLAIN, the password on stdin), bounded in time. */
function sieveConnect(port: number, user: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(SIEVE_CONNECT, ['--server', '127.0.0.1', '--port', String(port), '--user', user, '--authmech', 'PLAIN',
      '--passwordfd', '0', '--notlsverify', '--noclearauth', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
    child.stdin.end('password-123\n');
  });
}

test('sieve-connect uploads, lists, activates, downloads and deletes a script; a bad script is refused naming its line', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const dir = mkdtempSync(join(tmpdir(), 'sieve-connect-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = 'require ["fileinto"];\r\nif header :contains "subject" "report" {\r\n  fileinto "Reports";\r\n}\r\n';
  writeFileSync(join(dir, 'main.sieve'), script);
  writeFileSync(join(dir, 'bad.sieve'), 'keep;\r\nif true {\r\n');

  const up = await sieveConnect(app.managesievePort, address, ['--upload', '--localsieve', join(dir, 'main.sieve'), '--remotesieve', 'main']);
  t.is(up.code, 0, up.out);
  const act = await sieveConnect(app.managesievePort, address, ['--activate', '--remotesieve', 'main']);
  t.is(act.code, 0, act.out);
  const list = await sieveConnect(app.managesievePort, address, ['--list']);
  t.is(list.code, 0, list.out);
  t.regex(list.out, /"main" ACTIVE/);
  const down = await sieveConnect(app.managesievePort, address, ['--download', '--remotesieve', 'main', '--localsieve', join(dir, 'back.sieve')]);
  t.is(down.code, 0, down.out);
  t.is(readFileSync(join(dir, 'back.sieve'), 'utf8'), script);
  const bad = await sieveConnect(app.managesievePort, address, ['--upload', '--localsieve', join(dir, 'bad.sieve'), '--remotesieve', 'bad']);
  t.not(bad.code, 0);
  t.regex(bad.out, /line 3/);

  const rest = await app.get(`/v1/mailboxes/${encodeURIComponent(address)}/sieve`, key);
  t.deepEqual(rest.body.data, [{ name: 'main', active: true, size: Buffer.byteLength(script) }]);
  t.is((await sieveConnect(app.managesievePort, address, ['--deactivate'])).code, 0);
  const del = await sieveConnect(app.managesievePort, address, ['--delete', '--remotesieve', 'main']);
  t.is(del.code, 0, del.out);
  t.deepEqual((await app.get(`/v1/mailboxes/${encodeURIComponent(address)}/sieve`, key)).body.data, []);
});
