import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { rawImap } from '../helpers/imap.js';
import { lineSession, PASSWORD, plainToken, submissionApp, transport } from './world.js';

/** One AUTH PLAIN on a fresh implicit-TLS session; answers the reply. */
async function authOnce(t: Parameters<typeof lineSession>[0], port: number, user: string, pass: string): Promise<string> {
  const s = await lineSession(t, port, true);
  await s.cmd('EHLO client.test');
  return s.cmd(`AUTH PLAIN ${plainToken(user, pass)}`);
}

test('ten failures lock the IP out of submission and IMAP for ten minutes: the 11th AUTH gets 421 4.7.0 even with the right password', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const { app, box } = await submissionApp(t, { clock });
  for (let i = 0; i < 10; i++) {
    t.regex(await authOnce(t, app.submissionsPort, box.address, `wrong-${i}`), /^535 5\.7\.8 /, `failure ${i + 1}`);
  }
  const locked = await lineSession(t, app.submissionsPort, true);
  await locked.cmd('EHLO client.test');
  t.regex(await locked.cmd(`AUTH PLAIN ${plainToken(box.address, PASSWORD)}`), /^421 4\.7\.0 /, 'right password, locked IP');
  // 421 closes the channel.
  const deadline = Date.now() + 10_000;
  while (!locked.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.true(locked.closed);

  const tr = transport(app, 'starttls', box.address, PASSWORD, 'LOGIN');
  const err = await t.throwsAsync(tr.verify()) as Error & { responseCode?: number };
  tr.close();
  t.is(err.responseCode, 421, 'LOGIN on the STARTTLS port too');

  const imap = await rawImap(t, app.imapPort);
  await imap.until(/^\* OK/);
  imap.send(`a LOGIN ${box.address} ${PASSWORD}\r\n`);
  t.regex(await imap.until(/^a /), /^a NO \[UNAVAILABLE\]/m, 'IMAP shares the lock-out');

  clock.advance(9 * 60_000);
  t.regex(await authOnce(t, app.submissionsPort, box.address, PASSWORD), /^421 4\.7\.0 /, 'still locked after nine minutes');
  clock.advance(61_000);
  t.regex(await authOnce(t, app.submissionsPort, box.address, PASSWORD), /^235 /, 'free after ten minutes');
});

test('failures counted over IMAP lock submission out as well', async (t) => {
  const clock = manualClock(Date.UTC(2026, 0, 1, 12));
  const { app, box } = await submissionApp(t, { clock });
  const imap = await rawImap(t, app.imapPort);
  await imap.until(/^\* OK/);
  for (let i = 0; i < 10; i++) {
    const from = imap.text().length;
    imap.send(`f${i} LOGIN ${box.address} wrong-${i}\r\n`);
    t.regex(await imap.until(new RegExp(`^f${i} `), 15_000, from), new RegExp(`^f${i} NO`, 'm'));
  }
  t.regex(await authOnce(t, app.submissionsPort, box.address, PASSWORD), /^421 4\.7\.0 /);
});

test('password guessing from many connections at once ends in the lock-out, never in a login', async (t) => {
  const { app, box } = await submissionApp(t);
  const replies = await Promise.all(Array.from({ length: 15 }, (_, i) => authOnce(t, app.submissionsPort, box.address, `guess-${i}`)));
  for (const r of replies) t.regex(r, /^(535 5\.7\.8|421 4\.7\.0) /);
  t.regex(await authOnce(t, app.submissionsPort, box.address, PASSWORD), /^421 4\.7\.0 /, 'locked afterwards');
});
