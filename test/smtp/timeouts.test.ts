import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { createRecipientCheck } from '../../src/smtp/recipients.js';
import { createSmtpListener } from '../../src/smtp/server.js';
import { provision, rawSession, listAll } from '../helpers/smtp.js';

// The app's own listener uses minutes-long timeouts; this one is built from the same real parts
// (resolver, ingest) with short ones, so the timeouts can be watched.
async function shortListener(t: import('ava').ExecutionContext) {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'slow.test', ['snail']);
  const ingest = app.app.emails.ingest;
  const listener = createSmtpListener({
    config: app.config, logger: app.app.logger, clock: app.app.clock,
    checkRecipient: createRecipientCheck({ resolve: app.app.aliases.resolve, quota: null, maxRecipients: 100 }),
    accept: (d) => ingest.acceptRaw(d),
    overQuota: (ids, size) => ingest.overQuota(ids, size),
    limits: { idleTimeoutMs: 400, dataTimeoutMs: 1_500, closeGraceMs: 500 },
  });
  const port = await listener.listen();
  t.teardown(() => listener.close());
  return { app, key, port };
}

test('an idle session is closed with 421 after the idle timeout', async (t) => {
  const { port } = await shortListener(t);
  const s = await rawSession(port);
  t.teardown(() => s.close());
  await s.command('EHLO client.example');
  t.regex(await s.reply(), /^421 /);
});

test('a DATA phase that trickles past the DATA timeout is cut with 421 and nothing is kept', async (t) => {
  const { app, key, port } = await shortListener(t);
  const s = await rawSession(port);
  t.teardown(() => s.close());
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  await s.command('RCPT TO:<snail@slow.test>');
  t.regex(await s.command('DATA'), /^354 /);
  s.write(`Subject: slow\r\n\r\n${'z'.repeat(600 * 1024)}\r\n`);
  const replied = s.reply();
  // Every 200 ms a little more: never idle long enough for the idle timeout.
  const started = Date.now();
  const trickle = setInterval(() => { if (!s.socket.destroyed) s.write('more\r\n'); }, 200);
  t.teardown(() => clearInterval(trickle));
  t.regex(await replied, /^421 4\.4\.2 /);
  clearInterval(trickle);
  t.true(Date.now() - started >= 1_000);
  await new Promise((r) => setTimeout(r, 300));
  t.deepEqual(readdirSync(join(app.dataDir, 'tmp')).filter((f) => f.startsWith('smtp-')), [], 'the partial spool file is removed');
  t.deepEqual(await listAll(app, key), []);
});
