import test from 'ava';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// MOVE (RFC 6851) into the folder the message is in: like COPY then EXPUNGE, it gets a new UID.

test('MOVE into the same folder gives the message a new UID: COPYUID, EXPUNGE of the old number, EXISTS of the new', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('c', 'CREATE Box'), /^c OK/m);
  for (const tag of ['a1', 'a2']) t.regex(await appendRaw(c, tag, 'Box', `From: a@x.example\r\nSubject: ${tag}\r\n\r\nbody\r\n`, { flags: '\\Flagged' }), /^a\d OK/);
  const selected = await c.cmd('s', 'SELECT Box');
  const validity = /UIDVALIDITY (\d+)/.exec(selected)![1];
  const moved = await c.cmd('m', 'MOVE 1 Box');
  t.regex(moved, new RegExp(`^\\* OK \\[COPYUID ${validity} 1 3\\]`, 'm'));
  t.regex(moved, /^\* 1 EXPUNGE\r\n(\* [^\r]*\r\n)*\* 2 EXISTS/m);
  t.regex(moved, /^m OK/m);
  const listed = await c.cmd('f', 'FETCH 1:* (UID FLAGS)');
  t.regex(listed, /^\* 1 FETCH \(UID 2 FLAGS \([^)]*\)\)/m);
  t.regex(listed, /^\* 2 FETCH \(UID 3 FLAGS \([^)]*\\Flagged[^)]*\)\)/m, 'the message under its new UID, flags kept');
  t.regex(await c.cmd('u', 'UID MOVE 3 Box'), /^\* OK \[COPYUID \d+ 3 4\]/m);
});
