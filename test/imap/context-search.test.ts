import test from 'ava';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// CONTEXT=SEARCH (RFC 5267): RETURN (PARTIAL m:n), and RETURN (UPDATE) kept up to date with ADDTO
// and REMOVEFROM after each command until CANCELUPDATE or the folder is closed.

test('SEARCH RETURN (PARTIAL) and (UPDATE): ADDTO and REMOVEFROM follow flag changes and expunges; CANCELUPDATE stops them', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('cap', 'CAPABILITY'), /CONTEXT=SEARCH/);
  for (let i = 1; i <= 5; i++) t.regex(await appendRaw(c, `p${i}`, 'INBOX', `From: a@x.example\r\nSubject: s${i}\r\n\r\nbody\r\n`), /OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  t.regex(await c.cmd('p1', 'SEARCH RETURN (PARTIAL 2:4) ALL'), /^\* ESEARCH \(TAG "p1"\) PARTIAL \(2:4 2:4\)/m);
  t.regex(await c.cmd('p2', 'SEARCH RETURN (PARTIAL 4:9) 1:2,4:5'), /^\* ESEARCH \(TAG "p2"\) PARTIAL \(4:9 5\)/m);
  t.regex(await c.cmd('p3', 'SEARCH RETURN (PARTIAL 6:6) ALL'), /^\* ESEARCH \(TAG "p3"\) PARTIAL \(6:6 NIL\)/m);
  t.regex(await c.cmd('p4', 'SEARCH RETURN (PARTIAL 1) ALL'), /^p4 BAD/m);

  t.regex(await c.cmd('u', 'SEARCH RETURN (UPDATE ALL) SEEN'), /^\* ESEARCH \(TAG "u"\)\r\n/m);
  t.regex(await c.cmd('a', 'STORE 1,2,4 +FLAGS.SILENT (\\Seen)'), /^\* ESEARCH \(TAG "u"\) ADDTO \(\d+ 1:2,4\)/m);
  t.regex(await c.cmd('r', 'STORE 1 -FLAGS.SILENT (\\Seen)'), /^\* ESEARCH \(TAG "u"\) REMOVEFROM \(\d+ 1\)/m);
  t.regex(await c.cmd('d', 'STORE 4 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  const expunged = await c.cmd('x', 'EXPUNGE');
  t.regex(expunged, /^\* ESEARCH \(TAG "u"\) REMOVEFROM \(\d+ 4\)\r\n\* 4 EXPUNGE/m, 'by the number it had, before the EXPUNGE');
  const from = c.text().length;
  t.regex(await appendRaw(c, 'n', 'INBOX', 'Subject: new\r\n\r\nx\r\n', { flags: '\\Seen' }), /OK/);
  t.regex(c.text().slice(from), /^\* 5 EXISTS[\s\S]*^\* ESEARCH \(TAG "u"\) ADDTO \(\d+ 5\)/m, 'new mail that matches joins, after EXISTS');
  t.regex(await c.cmd('cu', 'CANCELUPDATE "u"'), /^cu OK/m);
  t.notRegex(await c.cmd('q', 'STORE 3 +FLAGS (\\Seen)'), /ESEARCH/, 'no more updates');

  t.regex(await c.cmd('uu', 'UID SEARCH RETURN (UPDATE) UNSEEN'), /^\* ESEARCH \(TAG "uu"\) UID\r\n/m);
  t.regex(await c.cmd('f', 'STORE 2 -FLAGS.SILENT (\\Seen)'), /^\* ESEARCH \(TAG "uu"\) UID ADDTO \(\d+ 2\)/m, 'UIDs for a UID SEARCH');
  t.regex(await c.cmd('ex', 'EXAMINE INBOX'), /^ex OK/m);
  t.notRegex(await c.cmd('g', 'NOOP'), /ESEARCH/, 'a new folder ends the kept searches');
});
