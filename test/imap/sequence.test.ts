import test from 'ava';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';

// Sequence numbers with several sessions on one folder (RFC 9051 7.5): a session is never sent a
// message number it was not told of by EXISTS, and EXPUNGE, EXISTS and FETCH keep their order.

/** Replays a session's untagged EXISTS/EXPUNGE/FETCH lines; answers the first out of step, or null. */
function outOfStep(text: string): string | null {
  let count = -1;
  for (const line of text.split('\r\n')) {
    let m = /^\* (\d+) EXISTS/.exec(line);
    if (m) { count = Number(m[1]); continue; }
    m = /^\* (\d+) EXPUNGE/.exec(line);
    if (m) { if (Number(m[1]) > count) return line; count--; continue; }
    m = /^\* (\d+) FETCH/.exec(line);
    if (m && (count < 0 || Number(m[1]) > count)) return `${line} (told of ${count})`;
  }
  return null;
}

async function session(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  return c;
}

async function append(c: RawImap, tag: string, subject: string, flags = ''): Promise<void> {
  const msg = `From: a@x.example\r\nSubject: ${subject}\r\n\r\nbody\r\n`;
  const from = c.text().length;
  c.send(`${tag} APPEND INBOX ${flags ? `(${flags}) ` : ''}{${msg.length}+}\r\n${msg}\r\n`);
  await c.until(new RegExp(`^${tag} OK`), 15_000, from);
}

test('a FETCH after mail arrived in another session tells EXISTS before any FETCH of the new message', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await session(t, imapPort, box.address);
  const b = await session(t, imapPort, box.address);
  await append(b, 'b1', 'one');
  await append(b, 'b2', 'two', '\\Flagged');
  t.regex(await b.cmd('b3', 'STORE 1:* +FLAGS (\\Answered)'), /^b3 OK/m);
  const reply = await a.cmd('f', 'FETCH 1:* (FLAGS)');
  t.regex(reply, /^\* \d+ EXISTS/m, 'the new messages are announced');
  t.is(outOfStep(a.text()), null);
  t.regex(await a.cmd('u', 'UID FETCH 1:* (FLAGS)'), /^u OK/m);
  t.is(outOfStep(a.text()), null);
});

test('flag changes and new mail announced together: EXISTS first, then the FETCH of the new message', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await session(t, imapPort, box.address);
  const b = await session(t, imapPort, box.address);
  await append(b, 'b1', 'new');
  // The new message's flags change before A hears of it: both reach A at its next NOOP.
  t.regex(await b.cmd('b2', 'STORE 1:* +FLAGS (\\Flagged)'), /^b2 OK/m);
  t.regex(await b.cmd('b3', 'STORE 1:* -FLAGS (\\Flagged)'), /^b3 OK/m);
  t.regex(await b.cmd('b4', 'STORE 1:* +FLAGS (\\Seen)'), /^b4 OK/m);
  t.regex(await a.cmd('n', 'NOOP'), /^n OK/m);
  t.is(outOfStep(a.text()), null);
});

test('expunges by another session wait during FETCH, STORE and SEARCH and keep numbers in step after', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await session(t, imapPort, box.address);
  const b = await session(t, imapPort, box.address);
  for (let i = 0; i < 4; i++) await append(b, `p${i}`, `m${i}`);
  t.regex(await a.cmd('n0', 'NOOP'), /^n0 OK/m);
  t.regex(await b.cmd('d', 'STORE 1:2 +FLAGS (\\Deleted)'), /^d OK/m);
  t.regex(await b.cmd('x', 'EXPUNGE'), /^x OK/m);
  await append(b, 'p9', 'later');
  const fetched = await a.cmd('f', 'FETCH 1:* (FLAGS)');
  t.notRegex(fetched, /EXPUNGE/, 'no EXPUNGE during a FETCH by number');
  t.regex(await a.cmd('s2', 'SEARCH ALL'), /^s2 OK/m);
  t.regex(await a.cmd('st', 'STORE 1 +FLAGS (\\Answered)'), /^st OK/m);
  const after = await a.cmd('n1', 'NOOP');
  t.regex(after, /^\* 2 EXPUNGE/m);
  t.is(outOfStep(a.text()), null);
  t.regex(await a.cmd('f2', 'FETCH 3 (FLAGS)'), /^\* 3 FETCH/m, 'three messages left, the last the new one');
});
