import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { startTestApp } from '../helpers/app.js';

/** A logger whose JSON lines the test reads. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { logger: pino({ level: 'warn' }, stream), lines };
}

const warnings = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.variable === 'MAILSTEAD_HOSTNAME');

test('a MAILSTEAD_HOSTNAME without a dot is warned about at start, naming the variable and what carries it', async (t) => {
  const { logger, lines } = capturingLogger();
  await startTestApp(t, { logger, env: { MAILSTEAD_HOSTNAME: 'vm' } });
  const [warning] = warnings(lines);
  t.truthy(warning, JSON.stringify(lines));
  t.is(warning.level, 40);
  t.is(warning.hostname, 'vm');
  t.regex(String(warning.msg), /MAILSTEAD_HOSTNAME is "vm"/);
  t.regex(String(warning.msg), /MX records/);
  t.regex(String(warning.msg), /certificate/);
  t.regex(String(warning.msg), /MAILER-DAEMON@vm/);
});

test('a fully qualified MAILSTEAD_HOSTNAME starts without that warning', async (t) => {
  const { logger, lines } = capturingLogger();
  const app = await startTestApp(t, { logger, env: { MAILSTEAD_HOSTNAME: 'mail.example.test' } });
  t.is((await app.get('/health')).status, 200);
  t.deepEqual(warnings(lines), []);
});
