import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

const num = (re: RegExp, text: string) => Number(re.exec(text)?.[1] ?? NaN);

test('CONDSTORE: MODSEQ is the update marker; UNCHANGEDSINCE refuses stale stores; CHANGEDSINCE lists what changed', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address);
  await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 2);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const sel = await c.cmd('b', 'SELECT INBOX (CONDSTORE)');
  const highest = num(/HIGHESTMODSEQ (\d+)/, sel);
  t.true(highest > 0);
  const f = await c.cmd('c', 'FETCH 1:2 (MODSEQ)');
  const m1 = num(/\* 1 FETCH \(MODSEQ \((\d+)\)\)/, f);
  const m2 = num(/\* 2 FETCH \(MODSEQ \((\d+)\)\)/, f);
  t.true(m1 > 0 && m1 <= highest);
  const stored = await c.cmd('d', `STORE 1 (UNCHANGEDSINCE ${m1}) +FLAGS (\\Flagged)`);
  // With CONDSTORE on, the STORE's FETCH carries UID and MODSEQ (RFC 7162).
  const m1b = num(/\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\\Flagged\) MODSEQ \((\d+)\)\)/, stored);
  t.true(m1b > m1, 'a change takes a new MODSEQ');
  t.regex(await c.cmd('e', `STORE 1 (UNCHANGEDSINCE ${m1}) +FLAGS (\\Answered)`), /^e OK \[MODIFIED 1\]/m, 'a store against a stale MODSEQ is refused');
  const since = await c.cmd('f', `UID FETCH 1:* (FLAGS) (CHANGEDSINCE ${Math.max(m1, m2)})`);
  t.regex(since, /\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\\Flagged\) MODSEQ/);
  t.notRegex(since, /\* 2 FETCH/);
  // An API read is a change with the same markers sync uses.
  await app.post(`/v1/emails/${items[0].id}/read`, box.key);
  const noop = await c.cmd('g', 'NOOP');
  t.regex(noop, /\* 2 FETCH \(UID 2 FLAGS \((?:\\Recent )?\\Seen\) MODSEQ \(\d+\)\)/);
});

test('QRESYNC: VANISHED in the session, and on re-select the expunged UIDs and changed flags since a MODSEQ', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 3; i++) await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 3);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  t.regex(await c.cmd('b', 'ENABLE QRESYNC'), /\* ENABLED QRESYNC/);
  const sel = await c.cmd('c', 'SELECT INBOX');
  const validity = num(/UIDVALIDITY (\d+)/, sel);
  const highest = num(/HIGHESTMODSEQ (\d+)/, sel);
  await c.cmd('d', 'UID STORE 3 +FLAGS.SILENT (\\Deleted)');
  t.regex(await c.cmd('e', 'UID EXPUNGE 3'), /\* VANISHED 3/);
  await c.cmd('f', 'UNSELECT');
  await app.del(`/v1/emails/${items[2].id}`, box.key); // UID 1
  await app.post(`/v1/emails/${items[1].id}/read`, box.key); // UID 2
  const again = await c.cmd('g', `SELECT INBOX (QRESYNC (${validity} ${highest}))`);
  t.regex(again, /\* VANISHED \(EARLIER\) 1,3/);
  t.regex(again, /\* 1 FETCH \(UID 2 FLAGS \(\\Seen\) MODSEQ \(\d+\)\)/);
  t.regex(again, /\* 1 EXISTS/);
  t.regex(await c.cmd('h', `UID FETCH 1:* (FLAGS) (CHANGEDSINCE ${highest} VANISHED)`), /\* VANISHED \(EARLIER\) 1,3/);
  t.regex(await c.cmd('i', 'SELECT Sent'), /\* OK \[CLOSED\]/);
});

test('CONDSTORE enabled by FETCH MODSEQ tells HIGHESTMODSEQ once; ESEARCH MIN/MAX give the MODSEQ of the message returned; IMAP4rev2 STORE answers with UID', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  for (let i = 0; i < 3; i++) t.regex(await appendRaw(c, `p${i}`, 'INBOX', `From: a@x.example\r\nSubject: ${i}\r\n\r\nbody\r\n`), /OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  t.regex(await c.cmd('f', 'FETCH 1 MODSEQ'), /^\* OK \[HIGHESTMODSEQ \d+\]/m, 'the first use enables CONDSTORE and tells HIGHESTMODSEQ');
  t.notRegex(await c.cmd('f2', 'FETCH 1 MODSEQ'), /HIGHESTMODSEQ/, 'once');
  t.regex(await c.cmd('st', 'STORE 1,3 +FLAGS.SILENT (\\Seen)'), /^st OK/m);
  const fetched = await c.cmd('g', 'FETCH 1:3 MODSEQ');
  const m = [1, 2, 3].map((n) => num(new RegExp(`\\* ${n} FETCH \\(MODSEQ \\((\\d+)\\)\\)`), fetched));
  t.regex(await c.cmd('mn', 'SEARCH RETURN (MIN) 1:3 MODSEQ 1'), new RegExp(`ESEARCH \\(TAG "mn"\\) MIN 1 MODSEQ ${m[0]}`));
  t.regex(await c.cmd('mx', 'SEARCH RETURN (MAX) 1:2 MODSEQ 1'), new RegExp(`ESEARCH \\(TAG "mx"\\) MAX 2 MODSEQ ${m[1]}`));
  t.regex(await c.cmd('al', 'SEARCH RETURN (ALL) 1:3 MODSEQ 1'), new RegExp(`MODSEQ ${Math.max(...m)}`));
  t.regex(await c.cmd('e', 'ENABLE IMAP4rev2'), /ENABLED IMAP4rev2/);
  t.regex(await c.cmd('r', 'STORE 2 +FLAGS (\\Flagged)'), /^\* 2 FETCH \(UID \d+ FLAGS/m);
});
