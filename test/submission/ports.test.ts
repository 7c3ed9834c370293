import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { startTestApp, tempDir, TEST_ENV } from '../helpers/app.js';
import { startServerProcess } from '../helpers/process.js';
import { waitFor } from '../helpers/webhooks.js';
import { lineSession } from './world.js';

test('the settings: defaults 587, 465 and 1000; empty disables a port; bad values name the variable', (t) => {
  const base = { MAILSTEAD_DATA_DIR: '/tmp/x' };
  const defaults = loadConfig(base);
  t.is(defaults.submissionPort, 587);
  t.is(defaults.submissionsPort, 465);
  t.is(defaults.submissionDailyLimit, 1000);
  const off = loadConfig({ ...base, MAILSTEAD_SUBMISSION_PORT: '', MAILSTEAD_SUBMISSIONS_PORT: '' });
  t.is(off.submissionPort, null);
  t.is(off.submissionsPort, null);
  t.throws(() => loadConfig({ ...base, MAILSTEAD_SUBMISSION_PORT: '70000' }), { message: /MAILSTEAD_SUBMISSION_PORT/ });
  t.throws(() => loadConfig({ ...base, MAILSTEAD_SUBMISSIONS_PORT: 'x' }), { message: /MAILSTEAD_SUBMISSIONS_PORT/ });
  t.throws(() => loadConfig({ ...base, MAILSTEAD_SUBMISSION_DAILY_LIMIT: '0' }), { message: /MAILSTEAD_SUBMISSION_DAILY_LIMIT/ });
});

test('port 0 is logged as submission_port and submissions_port, and both listen on MAILSTEAD_SMTP_HOST', async (t) => {
  // A loaded machine may take a while to start a process from the sources.
  const server = await startServerProcess(tempDir(t), {}, 120_000);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const found = await waitFor(() => {
    const lines = server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return {}; } });
    const a = lines.find((j) => j.submission_port);
    const b = lines.find((j) => j.submissions_port);
    return a && b ? { plain: a, implicit: b } : null;
  }, 'the submission port lines', 60_000);
  const ports = found!;
  t.is(ports.plain.host, TEST_ENV.MAILSTEAD_SMTP_HOST);
  t.is(ports.implicit.host, TEST_ENV.MAILSTEAD_SMTP_HOST);
  const plain = await lineSession(t, ports.plain.submission_port, false);
  t.regex(plain.greeting, /^220 mx\.mailstead\.test /);
  const implicit = await lineSession(t, ports.implicit.submissions_port, true);
  t.regex(implicit.greeting, /^220 mx\.mailstead\.test /);
});

test('an empty port disables that listener only', async (t) => {
  const app = await startTestApp(t, { env: { MAILSTEAD_SUBMISSIONS_PORT: '' } });
  t.is(app.submissionsPort, 0, 'no implicit-TLS listener');
  t.true(app.submissionPort > 0);
  const s = await lineSession(t, app.submissionPort, false);
  t.regex(s.greeting, /^220 /);
});
