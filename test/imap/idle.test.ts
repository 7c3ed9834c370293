import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { appendRaw, imapApp, imapClient, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { poll } from '../helpers/poll.js';
import { sendMail } from '../helpers/smtp.js';

/*
 * IDLE (RFC 2177, RFC 9051 6.3.13): `+ idling`, then what changes in the selected folder is told as
 * it happens, whichever face changed it, until DONE ends it with the tagged OK. How soon is the
 * timing suite's (test/timing/idle-wake.test.ts); here, what is told. Waits are bounded.
 */

async function login(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  return c;
}

/** Sends IDLE and waits for its continuation; answers where its output starts. */
async function idle(c: RawImap, tag = 'i'): Promise<number> {
  const from = c.text().length;
  c.send(`${tag} IDLE\r\n`);
  await c.until(/^\+ idling$/, 15_000, from);
  return from;
}

/** Sends DONE and waits for the tagged answer. */
async function done(c: RawImap, tag = 'i'): Promise<string> {
  const from = c.text().length;
  c.send('DONE\r\n');
  return c.until(new RegExp(`^${tag} (OK|NO|BAD)`), 15_000, from);
}

/** The UIDs the EXPUNGE lines in `text` removed, replayed against the UIDs the session knew. */
function expungedUids(text: string, known: number[]): number[] {
  const left = [...known];
  const gone: number[] = [];
  for (const m of text.matchAll(/^\* (\d+) EXPUNGE\r$/gm)) gone.push(...left.splice(Number(m[1]) - 1, 1));
  return gone.sort((a, b) => a - b);
}

/** The UIDs of the VANISHED lines in `text` (single UIDs and ranges). */
function vanishedUids(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/^\* VANISHED ([\d,:]+)\r$/gm)) {
    for (const part of m[1].split(',')) {
      const [a, b = a] = part.split(':').map(Number);
      for (let u = a; u <= b; u++) out.push(u);
    }
  }
  return out.sort((a, b) => a - b);
}

const message = (subject: string) => `From: a@x.example\r\nSubject: ${subject}\r\n\r\nbody\r\n`;

test('IDLE answers + idling; mail delivered over SMTP and through the API is told with EXISTS; DONE ends it with a tagged OK', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 0 EXISTS/m);
  const from = await idle(c);
  await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, `From: a@client.example\r\nTo: ${box.address}\r\nSubject: by smtp\r\nMessage-ID: <idle-smtp-${Date.now()}@client.example>\r\n\r\nhello\r\n`);
  t.regex(await c.until(/^\* 1 EXISTS$/, 60_000, from), /^\* 1 EXISTS\r\n\* 1 RECENT/m, 'SMTP delivery told, recent for this connection');
  await deliver(app, box.key, box.address, { subject: 'by api' });
  await c.until(/^\* 2 EXISTS$/, 30_000, from);
  t.regex(await done(c), /^i OK IDLE terminated/m);
  t.notRegex(await c.cmd('n', 'NOOP'), /EXISTS/, 'told once');
  t.regex(await c.cmd('f', 'UID FETCH 1:* (UID)'), /^\* 2 FETCH \(UID 2\)/m);
});

test('while idling, another session\'s flag change is told with FETCH and its expunge with EXPUNGE, or VANISHED with QRESYNC', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const b = await login(t, imapPort, box.address);
  for (const tag of ['p1', 'p2', 'p3']) t.regex(await appendRaw(b, tag, 'INBOX', message(tag)), /^p\d OK/);
  const c = await login(t, imapPort, box.address);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 3 EXISTS/m);
  const q = await login(t, imapPort, box.address);
  t.regex(await q.cmd('e', 'ENABLE QRESYNC'), /^\* ENABLED QRESYNC/m);
  t.regex(await q.cmd('s', 'SELECT INBOX'), /^\* 3 EXISTS/m);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^\* 3 EXISTS/m);
  const cFrom = await idle(c);
  const qFrom = await idle(q);

  t.regex(await b.cmd('f', 'STORE 2 +FLAGS (\\Flagged)'), /^f OK/m);
  await c.until(/^\* 2 FETCH \(UID 2 FLAGS \((?:\\Recent )?\\Flagged\)\)$/, 15_000, cFrom);
  await q.until(/^\* 2 FETCH \(UID 2 FLAGS \(\\Flagged\) MODSEQ \(\d+\)\)$/, 15_000, qFrom);

  t.regex(await b.cmd('d', 'STORE 1,3 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  t.regex(await b.cmd('x', 'EXPUNGE'), /^x OK/m);
  // Both at once (highest first) or one wake each (then the second by its closed-up number): either way UID 2 is left.
  await poll('both expunges told', () => expungedUids(c.text().slice(cFrom), [1, 2, 3]).length === 2, { timeoutMs: 15_000 });
  t.deepEqual(expungedUids(c.text().slice(cFrom), [1, 2, 3]), [1, 3]);
  await poll('both told as VANISHED', () => vanishedUids(q.text().slice(qFrom)).length === 2, { timeoutMs: 15_000 });
  t.deepEqual(vanishedUids(q.text().slice(qFrom)), [1, 3]);
  t.notRegex(q.text().slice(qFrom), /EXPUNGE\r\n/);
  t.regex(await done(c), /^i OK IDLE terminated/m);
  t.regex(await done(q), /^i OK IDLE terminated/m);
  t.regex(await c.cmd('f', 'FETCH 1 (UID FLAGS)'), /^\* 1 FETCH \(UID 2 FLAGS \((?:\\Recent )?\\Flagged\)\)/m, 'numbers in step after');
});

test('changes made before IDLE are told as soon as it starts; IDLE with no folder selected tells nothing and ends with DONE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 0 EXISTS/m);
  const b = await login(t, imapPort, box.address);
  t.regex(await appendRaw(b, 'p1', 'INBOX', message('before idle')), /^p1 OK/);
  const from = await idle(c);
  await c.until(/^\* 1 EXISTS$/, 15_000, from);
  t.regex(await done(c), /^i OK/m);

  t.regex(await c.cmd('u', 'UNSELECT'), /^u OK/m);
  const authFrom = await idle(c, 'j');
  await deliver(app, box.key, box.address, { subject: 'while idling unselected' });
  await waitForEmails(app, box.key, 2);
  const ended = await done(c, 'j');
  t.regex(ended, /^j OK IDLE terminated/m);
  t.notRegex(c.text().slice(authFrom), /EXISTS/, 'no folder, nothing to tell');
  t.regex(await c.cmd('s2', 'SELECT INBOX'), /^\* 2 EXISTS/m);
});

test('a line other than DONE ends IDLE with BAD and the session stays selected; done in lower case is DONE; IDLE takes no argument and needs a login', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const early = await rawImap(t, imapPort);
  t.regex(await early.cmd('a', 'IDLE'), /^a BAD log in first/m);
  const c = await login(t, imapPort, box.address);
  t.regex(await appendRaw(c, 'p1', 'INBOX', message('one')), /^p1 OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 1 EXISTS/m);
  const from = await idle(c);
  c.send('NOOP\r\n');
  t.regex(await c.until(/^i (OK|NO|BAD)/, 15_000, from), /^i BAD DONE expected/m);
  t.regex(await c.cmd('f', 'FETCH 1 (UID)'), /^\* 1 FETCH \(UID 1\)\r\nf OK/m, 'still selected');
  const lower = await idle(c, 'k');
  c.send('done\r\n');
  t.regex(await c.until(/^k (OK|NO|BAD)/, 15_000, lower), /^k OK IDLE terminated/m);
  t.regex(await c.cmd('m', 'IDLE now'), /^m BAD/m);
  t.notRegex(c.text().slice(lower), /^\+ idling\r\nm/m, 'no continuation for a refused IDLE');
});

test('imapflow: idle() hears of mail delivered through the API as an exists event, and a command afterwards ends the IDLE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const client = await imapClient(t, imapPort, box.address);
  await client.mailboxOpen('INBOX');
  const counts: number[] = [];
  client.on('exists', (e) => counts.push(e.count));
  const idling = client.idle();
  await deliver(app, box.key, box.address, { subject: 'for imapflow' });
  await poll('an exists event for the delivery', () => counts.includes(1), { timeoutMs: 30_000 });
  const status = await client.status('INBOX', { messages: true });
  t.is(status && status.messages, 1);
  await idling;
  t.deepEqual(counts, [1]);
});
