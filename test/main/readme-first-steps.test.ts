import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { quietDns } from '../helpers/dns.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { ROOT } from '../helpers/process.js';
import { fixedPort } from '../helpers/ports.js';
import { lastCheck } from '../helpers/poll.js';
import { checkoutCopy } from '../../scripts/checkout-copy.js';

/** The fenced `sh` blocks of README.md's "First steps" section, in order. */
function firstSteps(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## First steps\n');
  const end = readme.indexOf('\n## ', start + 1);
  if (start < 0 || end < 0) throw new Error('README.md has no "First steps" section');
  return [...readme.slice(start, end).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

// The README's first steps, every command in order, as a script against a fresh data directory.
// What the test changes is what the section itself defines: its ports (8080, 2525 and the
// high ports it exports) become free ones, `./data` a temporary directory, `localhost` 127.0.0.1
// (tests stay on loopback addresses), the profile it downloads lands there too, and the server's
// output goes to a log file. It runs in a copy of the checkout as `npm ci` leaves it (no dist/), so
// `npm start` builds first, as on a fresh machine, without writing into the checkout other tests read.
// The environment adds a quiet DNS server, so mail authentication gets fast answers.
test('README "First steps" runs from an empty box to mail in a mailbox', async (t) => {
  t.timeout(420_000);
  const blocks = firstSteps();
  t.true(blocks.length >= 6, 'the section has its command blocks');
  const dir = tempDir(t, 'mailstead-readme-');
  const checkout = checkoutCopy('mailstead-readme-checkout-');
  t.teardown(checkout.remove);
  const ports: Record<string, number> = {};
  for (const p of ['8080', '2525', '1587', '1465', '1993', '1143']) ports[p] = await fixedPort();
  let script = blocks.join('\n');
  t.regex(script, /^npm start &/m);
  script = script
    .replace(/^npm start &.*$/m, `npm start >${JSON.stringify(join(dir, 'server.log'))} 2>&1 &`)
    .replace(/MAILSTEAD_DATA_DIR=\.\/data/g, `MAILSTEAD_DATA_DIR=${JSON.stringify(join(dir, 'data'))}`)
    .replace(/ ann\.mobileconfig /g, ` ${JSON.stringify(join(dir, 'ann.mobileconfig'))} `)
    .replace(/\blocalhost\b/g, '127.0.0.1')
    .replace(/\b(8080|2525|1587|1465|1993|1143)\b/g, (p) => String(ports[p]));
  // The key the section made, for the checks below.
  script += '\nprintf "\\nKEY=%s\\n" "$KEY"\n';

  const env: Record<string, string> = {
    ...process.env as Record<string, string>,
    MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_SMTP_HOST: '127.0.0.1', MAILSTEAD_LOG_LEVEL: 'warn',
    MAILSTEAD_DNS_SERVERS: await quietDns(),
    ...(onPostgres ? { MAILSTEAD_DATABASE_URL: await freshPostgresDatabase(t) } : {}),
  };
  // Its own process group, so the server the script leaves running in the background goes with it.
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: checkout.dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const stopAll = () => { try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ } };
  t.teardown(stopAll);
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  // A step that never completes (a task that never finishes) ends the script, so its output is reported.
  // The bound leaves room for `npm start`'s first build of the whole project on a loaded machine.
  const bound = setTimeout(stopAll, 360_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(bound);
  const serverLog = () => (existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '');
  t.is(code, 0, `the script failed:\n${out}\n--- server log ---\n${serverLog()}`);

  t.true(existsSync(join(checkout.dir, 'dist', 'src', 'main.js')), '`npm start` built the copy before serving');

  // What the section promised along the way.
  t.regex(out, /"task_id":1,"domain":"example\.org"/);
  for (const name of ['_mailstead.example.org', 'mailstead._domainkey.example.org', '_imaps._tcp.example.org', '_submission._tcp.example.org', 'autoconfig.example.org']) t.true(out.includes(`"name":"${name}"`), name);
  t.regex(out, /"ann@example\.org"/);
  t.regex(out, /<hostname>mail\.example\.org<\/hostname>/);
  t.regex(readFileSync(join(dir, 'ann.mobileconfig'), 'utf8'), /<string>com\.apple\.mail\.managed<\/string>/);

  // Both messages reach Ann's inbox: the one to the alias from outside, the one she sent through submission.
  const key = /^KEY=(\w+)$/m.exec(out)?.[1];
  t.truthy(key);
  const api = `http://127.0.0.1:${ports['8080']}/api`;
  const subjects = await lastCheck(async () => {
    const r = await fetch(`${api}/v1/emails?per_page=10`, { headers: { authorization: `Bearer ${key}` } });
    return ((await r.json()) as { data: Array<{ subject: string }> }).data.map((e) => e.subject).sort();
  }, { timeoutMs: 30_000, everyMs: 100, done: (s) => s.length >= 2 });
  t.deepEqual(subjects, ['first mail', 'sent by ann']);
  stopAll();
});
