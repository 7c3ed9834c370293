import test from 'ava';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

// LIST-EXTENDED (RFC 5258) and LSUB: options not defined are BAD, CREATE does not subscribe,
// RECURSIVEMATCH lists a parent of a subscribed folder with CHILDINFO, LSUB % a parent as \Noselect.

test('LIST-EXTENDED: strict options, CREATE without subscribing, RECURSIVEMATCH with CHILDINFO; LSUB % names parents \\Noselect', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  for (const name of ['p/a', 'p/b/c', 'q']) t.regex(await c.cmd('c', `CREATE ${name}`), /^c OK/m);
  t.notRegex(await c.cmd('s0', 'LIST (SUBSCRIBED) "" p*'), /^\* LIST/m, 'CREATE subscribes to nothing, parents included');
  t.regex(await c.cmd('s1', 'SUBSCRIBE p/b/c'), /^s1 OK/m);
  t.regex(await c.cmd('s2', 'SUBSCRIBE q'), /^s2 OK/m);

  for (const bad of ['LIST (FROB) "" ""', 'LIST (RECURSIVEMATCH) "" ""', 'LIST (RECURSIVEMATCH REMOTE) "" ""', 'LIST "" "" RETURN (FROB)']) {
    t.regex(await c.cmd('b', bad), /^b BAD/m, bad);
  }
  t.regex(await c.cmd('r', 'LIST (REMOTE) "" %'), /^r OK/m);

  const rec = await c.cmd('m', 'LIST (SUBSCRIBED RECURSIVEMATCH) "" p/% RETURN (CHILDREN)');
  t.regex(rec, /^\* LIST \(\\HasChildren\) "\/" p\/b \(CHILDINFO \("SUBSCRIBED"\)\)/m);
  t.notRegex(rec, /p\/a/);
  const both = await c.cmd('m2', 'LIST (SUBSCRIBED RECURSIVEMATCH) "" (p/b p/b/c)');
  t.notRegex(both, /CHILDINFO/, 'no CHILDINFO when the subscribed child is listed itself');
  t.regex(both, /^\* LIST \([^)]*\\Subscribed\) "\/" p\/b\/c/m);

  const lsub = await c.cmd('u', 'LSUB "" %');
  t.regex(lsub, /^\* LSUB \(\\Noselect[^)]*\) "\/" p\r?$/m, 'p holds a subscribed folder % does not reach');
  t.regex(lsub, /^\* LSUB \([^)]*\) "\/" q\r?$/m);
  t.notRegex(lsub, /^\* LSUB \(\\Noselect[^)]*\) "\/" q/m);
  t.notRegex(await c.cmd('u2', 'LSUB "" *'), /\\Noselect/, 'with * nothing is hidden');
});

test('deleting a subscribed folder keeps the subscription: LIST (SUBSCRIBED) shows it \\NonExistent, LSUB \\Noselect; CREATE takes it back, UNSUBSCRIBE drops it', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  t.regex(await c.cmd('c', 'CREATE Old'), /^c OK/m);
  t.regex(await c.cmd('s', 'SUBSCRIBE Old'), /^s OK/m);
  t.regex(await c.cmd('d', 'DELETE Old'), /^d OK/m);
  t.regex(await c.cmd('l1', 'LIST (SUBSCRIBED) "" Old'), /^\* LIST \(\\NonExistent \\Subscribed\) "\/" Old/m);
  t.notRegex(await c.cmd('l2', 'LIST "" Old'), /^\* LIST/m, 'a plain LIST lists only folders');
  t.regex(await c.cmd('l3', 'LSUB "" Old'), /^\* LSUB \(\\Noselect[^)]*\) "\/" Old/m);
  t.regex(await c.cmd('c2', 'CREATE Old'), /^c2 OK/m);
  t.regex(await c.cmd('l4', 'LIST (SUBSCRIBED) "" Old'), /^\* LIST \(\\HasNoChildren \\Subscribed\) "\/" Old/m, 'made again, subscribed again');
  t.regex(await c.cmd('d2', 'DELETE Old'), /^d2 OK/m);
  t.regex(await c.cmd('u', 'UNSUBSCRIBE Old'), /^u OK/m);
  t.notRegex(await c.cmd('l5', 'LIST (SUBSCRIBED) "" Old'), /^\* LIST/m);
  t.regex(await c.cmd('u2', 'UNSUBSCRIBE Old'), /^u2 NO/m);
});
