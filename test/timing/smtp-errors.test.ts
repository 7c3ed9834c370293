import test from 'ava';
import { rawSession } from '../helpers/smtp.js';
import { shortListener } from '../smtp/short-listener.js';

// test/smtp/timeouts.test.ts tests the error limits' replies and that refusals past the soft limit wait;
// this checks that those before it, and temporary refusals, come at once.
const AT_ONCE_MS = 800;

test('refusals before the soft error limit, and a 452, are answered at once', async (t) => {
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
    t.true(ms < AT_ONCE_MS, `refusal ${i + 1} at once (${ms} ms)`);
  }
  t.regex(await s.command('RCPT TO:<snail@slow.test>'), /^250 /);
  const over = await timed('RCPT TO:<guess-over@slow.test>');
  t.regex(over.reply, /^452 4\.5\.3 /);
  t.true(over.ms < AT_ONCE_MS, `a 452 is not slowed (${over.ms} ms)`);
});
