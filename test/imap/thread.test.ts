import test from 'ava';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// THREAD (RFC 5256): REFERENCES (parents from References/In-Reply-To, threads gathered by base
// subject) and ORDEREDSUBJECT (by base subject, the first of each the parent of the rest).

const MSGS = [
  'Message-ID: <root@x>\r\nSubject: plans\r\nDate: Mon, 05 Jan 2026 10:00:00 +0000',
  'Message-ID: <other@x>\r\nSubject: lunch\r\nDate: Mon, 05 Jan 2026 10:30:00 +0000',
  'Message-ID: <r1@x>\r\nSubject: Re: plans\r\nReferences: <root@x>\r\nDate: Mon, 05 Jan 2026 11:00:00 +0000',
  'Message-ID: <r2@x>\r\nSubject: Re: plans\r\nIn-Reply-To: <root@x>\r\nDate: Mon, 05 Jan 2026 12:00:00 +0000',
  'Message-ID: <r3@x>\r\nSubject: Re: plans\r\nReferences: <root@x> <r1@x>\r\nDate: Mon, 05 Jan 2026 13:00:00 +0000',
  'Message-ID: <lost@x>\r\nSubject: Re: lunch\r\nReferences: <never-seen@x>\r\nDate: Mon, 05 Jan 2026 14:00:00 +0000',
];

test('THREAD REFERENCES and ORDEREDSUBJECT, by sequence number and by UID, over what the search keys match', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('cap', 'CAPABILITY'), /THREAD=REFERENCES THREAD=ORDEREDSUBJECT/);
  for (const [i, head] of MSGS.entries()) {
    const msg = `From: a@x.example\r\n${head}\r\n\r\nbody\r\n`;
    const from = c.text().length;
    c.send(`a${i} APPEND INBOX {${msg.length}+}\r\n${msg}\r\n`);
    await c.until(new RegExp(`^a${i} OK`), 15_000, from);
  }
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const threads = async (tag: string, cmd: string) => /^\* THREAD ([^\r]*)/m.exec(await c.cmd(tag, cmd))?.[1];
  // 3 and 5 chain under 1 (5 refers to 3), 4 replies to 1; 6's parent is unknown, so it joins "lunch" by subject.
  t.is(await threads('r', 'THREAD REFERENCES UTF-8 ALL'), '(1 (3 5)(4))(2 6)');
  t.is(await threads('o', 'THREAD ORDEREDSUBJECT UTF-8 ALL'), '(1 (3)(4)(5))(2 6)');
  t.is(await threads('k', 'THREAD REFERENCES UTF-8 NOT SUBJECT lunch'), '(1 (3 5)(4))');
  t.regex(await c.cmd('u', 'UID THREAD REFERENCES US-ASCII 1:2'), /^\* THREAD \(1\)\(2\)/m);
  t.regex(await c.cmd('b', 'THREAD FROB UTF-8 ALL'), /^b BAD/m);
});
