import test from 'ava';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// SORT (RFC 5256), SORT=DISPLAY (RFC 5957) and ESORT (RFC 5267).

const MSGS = [
  { date: '24-Mar-2007 10:00:00 +0000', head: 'From: Zed <zed@x.example>\r\nTo: bob@x.example\r\nSubject: Re: [list] Fwd: beta (fwd)\r\nDate: Sat, 24 Mar 2007 12:00:00 +0000' },
  { date: '23-Mar-2007 10:00:00 +0000', head: 'From: amy@x.example\r\nTo: Carol <carol@x.example>\r\nSubject: alpha\r\nDate: Sat, 24 Mar 2007 13:00:00 +0000' },
  { date: '25-Mar-2007 10:00:00 +0000', head: 'From: "Bo" <mia@x.example>\r\nTo: team: ann@x.example;\r\nSubject: =?utf-8?q?Gamma?=\r\nDate: Sat, 24 Mar 2007 11:00:00 +0000' },
];

test('SORT by base subject, arrival, date, size, address and display name, REVERSE and UID; ESORT RETURN', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('cap', 'CAPABILITY'), /SORT SORT=DISPLAY ESORT/);
  for (const [i, m] of MSGS.entries()) {
    const msg = `${m.head}\r\n\r\n${'x'.repeat(1000 * (3 - i))}\r\n`;
    const from = c.text().length;
    c.send(`a${i} APPEND INBOX "${m.date}" {${msg.length}+}\r\n${msg}\r\n`);
    await c.until(new RegExp(`^a${i} OK`), 15_000, from);
  }
  t.regex(await appendRaw(c, 'a9', 'Trash', 'Subject: elsewhere\r\n\r\nx\r\n'), /OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const order = async (tag: string, cmd: string) => (/^\* SORT([\d ]*)/m.exec(await c.cmd(tag, cmd))?.[1] ?? 'none').trim();
  t.is(await order('o1', 'SORT (SUBJECT) UTF-8 ALL'), '2 1 3', 'alpha, beta (Re:, [list], Fwd:, (fwd) gone), gamma (decoded)');
  t.is(await order('o2', 'SORT (REVERSE SUBJECT) UTF-8 ALL'), '3 1 2');
  t.is(await order('o3', 'SORT (ARRIVAL) US-ASCII ALL'), '2 1 3');
  t.is(await order('o4', 'SORT (DATE) UTF-8 ALL'), '3 1 2');
  t.is(await order('o5', 'SORT (SIZE) UTF-8 ALL'), '3 2 1');
  t.is(await order('o6', 'SORT (FROM) UTF-8 ALL'), '2 3 1', 'amy, mia, zed: by mailbox');
  t.is(await order('o7', 'SORT (DISPLAYFROM) UTF-8 ALL'), '2 3 1', 'amy@x.example, Bo, Zed');
  t.is(await order('o8', 'SORT (TO) UTF-8 ALL'), '1 2 3', 'bob, carol, team (a group by its name)');
  t.is(await order('o9', 'SORT (SUBJECT) UTF-8 NOT SUBJECT alpha'), '1 3', 'only what the search keys match');
  t.regex(await c.cmd('u', 'UID SORT (REVERSE ARRIVAL) UTF-8 ALL'), /^\* SORT 3 1 2\r?$/m);
  t.regex(await c.cmd('e', 'SORT RETURN (MIN MAX COUNT ALL) (SUBJECT) UTF-8 ALL'), /^\* ESEARCH \(TAG "e"\) MIN 2 MAX 3 ALL 2,1,3 COUNT 3/m);
  t.regex(await c.cmd('b', 'SORT (FROB) UTF-8 ALL'), /^b BAD/m);
  t.regex(await c.cmd('b2', 'SORT (SUBJECT REVERSE) UTF-8 ALL'), /^b2 BAD/m);
});
