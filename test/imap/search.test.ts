import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

test('SEARCH keys: flags, sizes, dates (UTC), headers, BODY/TEXT through the full-text index, UID sets, OR/NOT, ESEARCH and SAVE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'Quarterly report', from_email: 'boss@corp.example', body_text: 'numbers are excellent', received_at: '2026-01-05T10:00:00Z' });
  await deliver(app, box.key, box.address, { subject: 'Lunch plans', from_email: 'friend@fun.example', body_text: 'pizza tomorrow', received_at: '2026-01-06T23:30:00Z' });
  await deliver(app, box.key, box.address, { subject: 'Re: report', from_email: 'boss@corp.example', body_text: 'see attached', received_at: '2026-01-07T08:00:00Z' });
  await waitForEmails(app, box.key, 3);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  await c.cmd('c', 'STORE 2 +FLAGS (\\Flagged)');
  await c.cmd('d', 'STORE 3 +FLAGS (\\Seen)');
  const q = async (tag: string, keys: string) => {
    const r = await c.cmd(tag, `SEARCH ${keys}`);
    const m = /^\* SEARCH([\d ]*)/m.exec(r);
    if (!m) throw new Error(r);
    return m[1].trim() === '' ? [] : m[1].trim().split(' ').map(Number);
  };
  t.deepEqual(await q('e1', 'ALL'), [1, 2, 3]);
  t.deepEqual(await q('e2', 'FLAGGED'), [2]);
  t.deepEqual(await q('e3', 'UNSEEN'), [1, 2]);
  t.deepEqual(await q('e4', 'FROM boss@corp.example'), [1, 3]);
  t.deepEqual(await q('e5', 'SUBJECT "report"'), [1, 3]);
  t.deepEqual(await q('e6', 'BODY pizza'), [2]);
  t.deepEqual(await q('e7', 'TEXT excellent'), [1]);
  t.deepEqual(await q('e8', 'OR FLAGGED SEEN'), [2, 3]);
  t.deepEqual(await q('e9', 'NOT FROM boss'), [2]);
  t.deepEqual(await q('e10', 'ON 6-Jan-2026'), [2], 'INTERNALDATE compared by UTC day');
  t.deepEqual(await q('e11', 'SINCE 6-Jan-2026 BEFORE 7-Jan-2026'), [2]);
  t.deepEqual(await q('e12', 'UID 2:*'), [2, 3]);
  t.deepEqual(await q('e13', '2:3 UNFLAGGED'), [3]);
  t.deepEqual(await q('e14', 'LARGER 1 SMALLER 100000000'), [1, 2, 3]);
  t.deepEqual(await q('e15', 'HEADER Subject lunch'), [2]);
  t.deepEqual(await q('e16', 'SENTSINCE 7-Jan-2026'), [3], 'the Date header of the rendered mail');
  t.deepEqual(await q('e17', 'CHARSET UTF-8 BODY tomorrow'), [2]);
  t.deepEqual(await q('e18', 'KEYWORD $Nope'), []);
  t.deepEqual(await q('e19', '(FROM boss SUBJECT "Re:")'), [3]);
  t.regex(await c.cmd('f', 'UID SEARCH RETURN (MIN MAX COUNT) FROM boss'), /\* ESEARCH \(TAG "f"\) UID MIN 1 MAX 3 COUNT 2/);
  await c.cmd('g', 'SEARCH RETURN (SAVE) FLAGGED');
  t.regex(await c.cmd('h', 'FETCH $ (UID)'), /\* 2 FETCH \(UID 2\)/);
  t.regex(await c.cmd('i', 'SEARCH CHARSET KOI8-R ALL'), /^i NO \[BADCHARSET/m);
  t.regex(await c.cmd('j', 'SEARCH FROBNICATE'), /^j BAD/m);
  t.regex(await c.cmd('k', 'SEARCH MODSEQ 1'), /\* SEARCH 1 2 3 \(MODSEQ \d+\)/);
});

test('SEARCH BODY and TEXT match substrings (TEXT custom header fields too); SENT* use the Date header\'s own day; addresses with comments', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const msgs = [
    'From: <user-from (comment)@ (comment) domain.org>\r\nDate: Sat, 24 Mar 2007 23:00:00 -0200\r\nX-Tracking: ticket-QWERTY123\r\nSubject: one\r\n\r\nasdfghjkl zxcvbnm\r\n',
    'From: other@domain.org\r\nDate: Sun, 25 Mar 2007 00:30:00 +0300\r\nSubject: two\r\n\r\nnothing here\r\n',
  ];
  for (const [i, m] of msgs.entries()) t.regex(await appendRaw(c, `p${i}`, 'INBOX', m), /OK/);
  await c.cmd('b', 'SELECT INBOX');
  const q = async (tag: string, keys: string) => {
    const r = await c.cmd(tag, `SEARCH ${keys}`);
    const m = /^\* SEARCH([\d ]*)/m.exec(r);
    if (!m) throw new Error(r);
    return m[1].trim() === '' ? [] : m[1].trim().split(' ').map(Number);
  };
  t.deepEqual(await q('s1', 'BODY sdfghjk'), [1], 'a substring of a word');
  t.deepEqual(await q('s2', 'TEXT XCVBN'), [1], 'any case');
  t.deepEqual(await q('s3', 'TEXT qwerty12'), [1], 'a custom header field');
  t.deepEqual(await q('s4', 'BODY qwerty12'), [], 'BODY leaves the header out');
  t.deepEqual(await q('s5', 'SENTON 24-Mar-2007'), [1], 'the day as written, not in UTC (25 Mar 01:00)');
  t.deepEqual(await q('s6', 'SENTON 25-Mar-2007'), [2], 'the day as written, not in UTC (24 Mar 21:30)');
  t.deepEqual(await q('s7', 'SENTBEFORE 25-Mar-2007'), [1]);
  t.deepEqual(await q('s8', 'FROM user-from@domain.org'), [1], 'comments inside the address are no part of it');
});
