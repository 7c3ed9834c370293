import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { provision, rawSession } from '../helpers/smtp.js';

/** A command line of exactly `octets` octets with its CRLF (rawSession adds the CRLF). */
const line = (prefix: string, octets: number, suffix = '') => prefix + 'a'.repeat(octets - 2 - prefix.length - suffix.length) + suffix;

for (const listener of ['ingress', 'submission'] as const) {
  test(`${listener}: a command line over 512 octets is answered 500 5.5.2 line too long and the session goes on`, async (t) => {
    const app = await startTestApp(t);
    const port = listener === 'ingress' ? app.smtpPort : app.submissionPort;
    const s = await rawSession(port);
    t.teardown(() => s.close());
    t.regex(await s.command('EHLO client.example'), /^250[ -]/);
    t.regex(await s.command(line('NOOP ', 1000)), /^500 5\.5\.2 line too long\r?$/m, 'a 1,000-octet line');
    t.regex(await s.command(line('XYZZ ', 513)), /^500 5\.5\.2 line too long/m, 'one octet over, whatever the command');
    t.regex(await s.command(line('NOOP ', 512)), /^250 /, '512 octets with the CRLF is a command');
    t.regex(await s.command('NOOP'), /^250 /);
    t.regex(await s.command('QUIT'), /^221 /);
  });
}

test('MAIL gets the room its offered parameters add (RFC 1870, 6152, 6531, 8689), RCPT none', async (t) => {
  const app = await startTestApp(t);
  await provision(app, 'long.test', ['box']);
  const s = await rawSession(app.smtpPort);
  t.teardown(() => s.close());
  await s.command('EHLO client.example');
  const mail = (octets: number) => line('MAIL FROM:<', octets, '@client.example> SIZE=100 BODY=8BITMIME SMTPUTF8');
  // 573 octets is within SIZE, BODY, SMTPUTF8 and REQUIRETLS's allowance: not refused for its length (the long local part may be refused otherwise).
  t.notRegex(await s.command(mail(573)), /line too long/);
  t.regex(await s.command('RSET'), /^250 /);
  t.regex(await s.command(mail(574)), /^500 5\.5\.2 line too long/m);
  t.regex(await s.command('MAIL FROM:<sender@client.example>'), /^250 /);
  t.regex(await s.command(line('RCPT TO:<box@long.test>', 513)), /^500 5\.5\.2 line too long/m);
  t.regex(await s.command('RCPT TO:<box@long.test>'), /^250 /);
});
