import test from 'ava';
import { appendRaw, imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// ENVELOPE (RFC 9051 7.5.2): groups in start/end form, a comment in a group is no member, and a
// source route is the address's adl.

const MSG = [
  'From: <@route:user@domain>',
  'To: group: g1@d1.org, g2@d2.org;, group2: g3@d3.org;',
  'Cc: group: ; group2: (foo) ;',
  'Subject: groups',
  '',
  'body',
  '',
].join('\r\n');

test('ENVELOPE: empty groups and a group holding only a comment have no members; a source route is the adl', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await appendRaw(c, 'a', 'INBOX', MSG), /^a OK/);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const reply = await c.cmd('f', 'FETCH 1 ENVELOPE');
  t.true(reply.includes('ENVELOPE (NIL "groups" ((NIL "@route" "user" "domain")) ((NIL "@route" "user" "domain")) ((NIL "@route" "user" "domain")) '
    + '((NIL NIL "group" NIL)(NIL NIL "g1" "d1.org")(NIL NIL "g2" "d2.org")(NIL NIL NIL NIL)(NIL NIL "group2" NIL)(NIL NIL "g3" "d3.org")(NIL NIL NIL NIL)) '
    + '((NIL NIL "group" NIL)(NIL NIL NIL NIL)(NIL NIL "group2" NIL)(NIL NIL NIL NIL)) NIL NIL NIL)'), reply);
});
