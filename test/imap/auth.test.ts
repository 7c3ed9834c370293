import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';
import { lastCheck } from '../helpers/poll.js';

const plain = (user: string, pass: string, authz = '') => Buffer.from(`${authz}\0${user}\0${pass}`).toString('base64');

test('AUTHENTICATE PLAIN with an initial response and through a continuation; wrong identities refused', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a', `AUTHENTICATE PLAIN ${plain(box.address, 'nope-nope')}`), /^a NO \[AUTHENTICATIONFAILED\]/m);
  t.regex(await c.cmd('b', `AUTHENTICATE PLAIN ${plain(box.address, PASSWORD, 'someone@else.example')}`), /^b NO \[AUTHORIZATIONFAILED\]/m);
  t.regex(await c.cmd('c', 'AUTHENTICATE PLAIN !!notbase64!!'), /^c BAD/m);
  t.regex(await c.cmd('d', 'AUTHENTICATE CRAM-MD5'), /^d NO/m);
  const from = c.text().length;
  c.send('e AUTHENTICATE PLAIN\r\n');
  await c.until(/^\+/, 15_000, from);
  c.send(`${plain(box.address.toUpperCase(), PASSWORD)}\r\n`);
  t.regex(await c.until(/^e (OK|NO|BAD)/, 15_000, from), /^e OK \[CAPABILITY [^\]]*\] AUTHENTICATE completed/m);
  t.regex(await c.cmd('f', 'LOGIN x y'), /^f BAD/m, 'no second login');
});

test('the STARTTLS port offers LOGINDISABLED until STARTTLS, then logs in; clear text sent after STARTTLS is dropped', async (t) => {
  const { box, imapStarttlsPort } = await imapApp(t);
  const c = await rawImap(t, imapStarttlsPort, { secure: false });
  const caps = await c.cmd('a', 'CAPABILITY');
  t.regex(caps, /STARTTLS/);
  t.regex(caps, /LOGINDISABLED/);
  t.notRegex(caps, /AUTH=PLAIN/);
  t.regex(await c.cmd('b', `LOGIN ${box.address} ${PASSWORD}`), /^b NO \[PRIVACYREQUIRED\]/m);
  const from = c.text().length;
  // A command piggy-backed after STARTTLS in the same packet must not run after the handshake.
  c.send('c STARTTLS\r\nx NOOP\r\n');
  await c.until(/^c OK/, 15_000, from);
  await c.startTls();
  const after = await c.cmd('d', 'CAPABILITY');
  t.regex(after, /AUTH=PLAIN/);
  t.notRegex(after, /LOGINDISABLED/);
  t.notRegex(c.text(), /^x OK/m);
  t.regex(await c.cmd('e', `LOGIN ${box.address} ${PASSWORD}`), /^e OK/m);
});

test('ten failures from one IP lock it out of every login for ten minutes, the right password included', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const { box, imapPort } = await imapApp(t, { clock });
  const c = await rawImap(t, imapPort);
  for (let i = 0; i < 10; i++) t.regex(await c.cmd(`f${i}`, `LOGIN ${box.address} wrong${i}`), new RegExp(`^f${i} NO \\[AUTHENTICATIONFAILED\\]`, 'm'));
  t.regex(await c.cmd('g', `LOGIN ${box.address} ${PASSWORD}`), /^g NO \[UNAVAILABLE\]/m, 'the eleventh attempt is refused even with the right password');
  const other = await rawImap(t, imapPort);
  t.regex(await other.cmd('h', `AUTHENTICATE PLAIN ${plain(box.address, PASSWORD)}`), /^h NO \[UNAVAILABLE\]/m, 'on every connection and mechanism');
  clock.advance(9 * 60_000);
  t.regex(await other.cmd('i', `LOGIN ${box.address} ${PASSWORD}`), /^i NO \[UNAVAILABLE\]/m, 'still locked after nine minutes');
  clock.advance(61_000);
  t.regex(await other.cmd('j', `LOGIN ${box.address} ${PASSWORD}`), /^j OK/m, 'free again after ten minutes');
});

test('a mailbox takes at most 20 sessions at once', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const sessions: Array<Awaited<ReturnType<typeof rawImap>>> = [];
  for (let i = 0; i < 20; i++) {
    const c = await rawImap(t, imapPort);
    t.regex(await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`), /^a OK/m);
    sessions.push(c);
  }
  const extra = await rawImap(t, imapPort);
  t.regex(await extra.cmd('a', `LOGIN ${box.address} ${PASSWORD}`), /^a NO \[LIMIT\]/m);
  await sessions[0].cmd('z', 'LOGOUT');
  await lastCheck(() => sessions[0].closed, { timeoutMs: 2_000, everyMs: 20 });
  // The count drops when the connection closes; allow the server a moment to see it.
  let tag = 0;
  const ok = await lastCheck(async () => /^b\d+ OK/m.test(await extra.cmd(`b${++tag}`, `LOGIN ${box.address} ${PASSWORD}`)), { timeoutMs: 10_000, everyMs: 100 });
  t.true(ok, 'a slot frees when a session ends');
});

test('twenty correct logins at once from one address all succeed: checks in flight are no failures', async (t) => {
  t.timeout(120_000);
  const { box, imapPort } = await imapApp(t);
  const sessions = await Promise.all(Array.from({ length: 20 }, () => rawImap(t, imapPort)));
  const replies = await Promise.all(sessions.map((c, i) => c.cmd(`l${i}`, `LOGIN ${box.address} ${PASSWORD}`, 100_000)));
  replies.forEach((r, i) => t.regex(r, new RegExp(`^l${i} OK`, 'm'), `login ${i + 1}`));
});
