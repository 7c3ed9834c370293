import test from 'ava';
import { appendRaw, imapApp, imapClient, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';

/*
 * ENABLE (RFC 5161): CONDSTORE, QRESYNC (which turns CONDSTORE on with it, RFC 7162 3.2.3) and
 * IMAP4rev2 (RFC 9051 appendix A) can be enabled; `* ENABLED` lists only what this command turned
 * on, anything else asked for is ignored, and what is enabled is the connection's own.
 */

async function login(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  return c;
}

const message = (subject: string) => `From: a@x.example\r\nSubject: ${subject}\r\n\r\nbody\r\n`;

test('ENABLE is refused before authentication; after it, * ENABLED lists only what was turned on now, unknown names are ignored', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a', 'ENABLE CONDSTORE'), /^a BAD log in first/m);
  t.notRegex(c.text(), /^\* ENABLED/m, 'nothing enabled before login');
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('b', 'ENABLE X-NOT-AN-EXTENSION condstore UTF8=ACCEPT'), /^\* ENABLED CONDSTORE\r\nb OK ENABLE completed/m, 'the known one, in upper case; the others ignored');
  t.regex(await c.cmd('c', 'ENABLE CONDSTORE'), /^\* ENABLED\r\nc OK/m, 'already enabled: not listed again');
  t.regex(await c.cmd('d', 'ENABLE X-ONLY-UNKNOWN SORT'), /^\* ENABLED\r\nd OK/m, 'nothing known asked: an empty ENABLED, still OK');
  t.regex(await c.cmd('e', 'ENABLE'), /^e BAD/m, 'at least one name is required');
  t.regex(await c.cmd('f', 'ENABLE IMAP4rev2 IMAP4REV2'), /^\* ENABLED IMAP4rev2\r\nf OK/m, 'listed once, spelled as advertised');
  t.regex(await c.cmd('g', 'CAPABILITY'), /^g OK/m, 'the session goes on');
});

test('ENABLE CONDSTORE: the STORE answers and the FETCHes announcing another session\'s change carry MODSEQ; a session that did not enable it sees none', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await login(t, imapPort, box.address);
  for (const tag of ['p1', 'p2']) t.regex(await appendRaw(a, tag, 'INBOX', message(tag)), /^p\d OK/);
  const b = await login(t, imapPort, box.address);
  t.regex(await a.cmd('e', 'ENABLE CONDSTORE'), /^\* ENABLED CONDSTORE/m);
  t.regex(await a.cmd('s', 'SELECT INBOX'), /^\* OK \[HIGHESTMODSEQ \d+\]/m);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^s OK \[READ-WRITE\]/m);

  t.regex(await a.cmd('st', 'STORE 2 +FLAGS (\\Seen)'), /^\* 2 FETCH \(UID 2 FLAGS \((?:\\Recent )?\\Seen\) MODSEQ \(\d+\)\)/m, 'UID and MODSEQ in the STORE answer (RFC 7162)');
  const stored = await b.cmd('st', 'STORE 1 +FLAGS (\\Flagged)');
  t.regex(stored, /^\* 1 FETCH \(FLAGS \(\\Flagged\)\)\r\nst OK/m, 'no MODSEQ where CONDSTORE is off');
  t.regex(stored, /^\* 2 FETCH \(UID 2 FLAGS \(\\Seen\)\)\r\n/m, 'the other session\'s change, without MODSEQ');
  t.regex(await a.cmd('n', 'NOOP'), /^\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\\Flagged\) MODSEQ \(\d+\)\)/m, 'the same for a, with MODSEQ');
});

test('ENABLE QRESYNC turns CONDSTORE on with it and lets SELECT take QRESYNC parameters; expunges are then told with VANISHED', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  for (const tag of ['p1', 'p2', 'p3']) t.regex(await appendRaw(c, tag, 'INBOX', message(tag)), /^p\d OK/);
  t.regex(await c.cmd('q0', 'SELECT INBOX (QRESYNC (1 1))'), /^q0 BAD ENABLE QRESYNC first/m, 'QRESYNC parameters need ENABLE QRESYNC');
  t.regex(await c.cmd('e', 'ENABLE QRESYNC'), /^\* ENABLED QRESYNC\r\ne OK/m);
  t.regex(await c.cmd('e2', 'ENABLE CONDSTORE'), /^\* ENABLED\r\ne2 OK/m, 'CONDSTORE came with QRESYNC');
  const sel = await c.cmd('s', 'SELECT INBOX');
  const validity = Number(/UIDVALIDITY (\d+)/.exec(sel)?.[1]);
  const highest = Number(/HIGHESTMODSEQ (\d+)/.exec(sel)?.[1]);
  t.regex(await c.cmd('st', 'STORE 2 +FLAGS (\\Deleted)'), /^\* 2 FETCH \(UID 2 FLAGS \([^)]*\\Deleted\) MODSEQ \(\d+\)\)/m, 'CONDSTORE is on: UID and MODSEQ in the STORE answer');
  const expunged = await c.cmd('x', 'EXPUNGE');
  t.regex(expunged, /^\* VANISHED 2\r\nx OK/m, 'VANISHED instead of EXPUNGE');
  t.notRegex(expunged, /EXPUNGE\r\n/);
  const again = await c.cmd('q1', `SELECT INBOX (QRESYNC (${validity} ${highest}))`);
  t.regex(again, /^\* OK \[CLOSED\]/m);
  t.regex(again, /^\* VANISHED \(EARLIER\) 2/m, 'the expunge since the known MODSEQ');
  t.regex(again, /^q1 OK/m);
});

test('ENABLE IMAP4rev2: SELECT leaves out RECENT and UNSEEN, SEARCH answers ESEARCH, STORE answers carry the UID; another session keeps IMAP4rev1', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const rev1 = await login(t, imapPort, box.address);
  for (const tag of ['p1', 'p2']) t.regex(await appendRaw(rev1, tag, 'INBOX', message(tag)), /^p\d OK/);
  const rev2 = await login(t, imapPort, box.address);
  t.regex(await rev2.cmd('e', 'ENABLE imap4rev2'), /^\* ENABLED IMAP4rev2\r\ne OK/m);

  const sel2 = await rev2.cmd('s', 'SELECT INBOX');
  t.regex(sel2, /^\* 2 EXISTS/m);
  t.notRegex(sel2, /RECENT|UNSEEN/, 'no RECENT or UNSEEN in IMAP4rev2');
  const sel1 = await rev1.cmd('s', 'EXAMINE INBOX');
  t.regex(sel1, /^\* \d+ RECENT/m, 'IMAP4rev1 still tells RECENT');
  t.regex(sel1, /^\* OK \[UNSEEN 1\]/m);

  t.regex(await rev2.cmd('se', 'SEARCH ALL'), /^\* ESEARCH \(TAG "se"\) ALL 1:2\r\nse OK/m);
  t.regex(await rev1.cmd('se', 'SEARCH ALL'), /^\* SEARCH 1 2\r\nse OK/m);
  t.regex(await rev2.cmd('st', 'STORE 2 +FLAGS (\\Answered)'), /^\* 2 FETCH \(UID 2 FLAGS \(\\Answered\)\)\r\nst OK/m);
});

test('imapflow enables what it asks for and the server offers: CONDSTORE, IMAP4rev2, and QRESYNC when asked', async (t) => {
  const { box, imapPort } = await imapApp(t);
  t.regex(await appendRaw(await login(t, imapPort, box.address), 'p1', 'INBOX', message('p1')), /^p1 OK/);
  const plain = await imapClient(t, imapPort, box.address);
  t.true(plain.enabled.has('CONDSTORE'));
  t.true(plain.enabled.has('IMAP4REV2'));
  t.false(plain.enabled.has('QRESYNC'));
  const resync = await imapClient(t, imapPort, box.address, PASSWORD, { qresync: true });
  t.true(resync.enabled.has('QRESYNC'));
  const lock = await resync.getMailboxLock('INBOX');
  try {
    t.true(resync.mailbox !== false && Number(resync.mailbox.highestModseq) > 0, `HIGHESTMODSEQ on the opened folder: ${resync.mailbox && resync.mailbox.highestModseq}`);
  } finally {
    lock.release();
  }
});
