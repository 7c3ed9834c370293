import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { rawSession, listAll } from '../helpers/smtp.js';
import { shortListener } from './short-listener.js';

test('an idle session is closed with 421 after the idle timeout', async (t) => {
  const { port } = await shortListener(t);
  const s = await rawSession(port);
  t.teardown(() => s.close());
  await s.command('EHLO client.example');
  t.regex(await s.reply(), /^421 /);
});

test('a DATA phase that trickles past the DATA timeout is cut with 421 and nothing is kept', async (t) => {
  // The idle timeout stays well above the trickle's 200 ms, so a loaded host's late timers cannot
  // make it the idle timeout that cuts the session instead of the DATA one.
  const { app, key, port } = await shortListener(t, { idleTimeoutMs: 2_000, dataTimeoutMs: 4_000, closeGraceMs: 500 });
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
  t.true(Date.now() - started >= 3_000);
  // The spool file goes when the cut session is cleaned up, just after the 421: polled, bounded.
  const spooled = () => readdirSync(join(app.dataDir, 'tmp')).filter((f) => f.startsWith('smtp-'));
  for (const deadline = Date.now() + 10_000; spooled().length > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(spooled(), [], 'the partial spool file is removed');
  t.deepEqual(await listAll(app, key), []);
});

test('refusals past the soft error limit are answered slowly, and the hard limit ends the session with 421', async (t) => {
  const { port } = await shortListener(t, { softErrors: 2, errorDelayMs: 1_000, hardErrors: 5 });
  const s = await rawSession(port);
  t.teardown(() => s.close());
  await s.command('EHLO client.example');
  await s.command('MAIL FROM:<x@example.org>');
  const timed = async (command: string) => {
    const started = Date.now();
    const reply = await s.command(command);
    return { reply, ms: Date.now() - started };
  };
  for (let i = 0; i < 2; i++) {
    const { reply, ms } = await timed(`RCPT TO:<guess${i}@slow.test>`);
    t.regex(reply, /^550 5\.1\.1 /);
    t.log(`refusal ${i + 1}: ${ms} ms (that it comes at once is the timing lane's check: test/timing/smtp-errors.test.ts)`);
  }
  // Temporary refusals are not the client's fault: this listener takes one recipient per message.
  t.regex(await s.command('RCPT TO:<snail@slow.test>'), /^250 /);
  const over = await timed('RCPT TO:<guess-over@slow.test>');
  t.regex(over.reply, /^452 4\.5\.3 /);
  t.regex(await s.command('RSET'), /^250 /);
  for (let i = 2; i < 4; i++) {
    const { reply, ms } = await timed(`MAIL FROM:<bad@example.org> FOO=${i}`);
    t.regex(reply, /^555 /);
    t.true(ms >= 950, `refusal ${i + 1} waits (${ms} ms)`);
  }
  t.regex(await s.command('MAIL FROM:<x@example.org>'), /^250 /);
  t.regex(await s.command('RCPT TO:<guess-last@slow.test>'), /^421 4\.7\.0 too many errors/);
  await new Promise<void>((resolve) => (s.socket.destroyed ? resolve() : s.socket.once('close', () => resolve())));
  t.true(s.socket.destroyed, 'the server closed the connection');
});
