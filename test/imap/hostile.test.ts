import test from 'ava';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';

test('malformed and out-of-state commands get BAD or NO, and the session goes on', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a1', 'FETCH 1 FLAGS'), /^a1 BAD log in first/m);
  t.regex(await c.cmd('a2', 'UID'), /^a2 BAD/m);
  t.regex(await c.cmd('a3', 'LOGIN'), /^a3 BAD/m);
  t.regex(await c.cmd('a4', 'LOGIN a b c'), /^a4 BAD/m);
  const from = c.text().length;
  c.send('\r\n*\r\n+ x\r\n');
  await c.until(/BAD/, 15_000, from);
  c.send(Buffer.from([0x61, 0x35, 0x20, 0xff, 0xfe, 0x00, 0x01, 0x0d, 0x0a]));
  await c.until(/^a5 BAD/, 15_000, from);
  t.regex(await c.cmd('a6', `LOGIN ${box.address} ${PASSWORD}`), /^a6 OK/m);
  t.regex(await c.cmd('a7', 'FETCH 1 FLAGS'), /^a7 BAD .*not allowed now/m, 'FETCH needs a selected folder');
  await c.cmd('a8', 'SELECT INBOX');
  t.regex(await c.cmd('a9', 'FETCH 0 FLAGS'), /^a9 BAD/m);
  t.regex(await c.cmd('b1', 'FETCH 1:* (BOGUS)'), /^b1 BAD/m);
  t.regex(await c.cmd('b2', 'STORE 1:* FLAGS (\\Bogus)'), /^b2 BAD/m);
  t.regex(await c.cmd('b3', 'UID FETCH 1:* FLAGS'), /^b3 OK/m, 'an empty folder fetch is fine');
  t.regex(await c.cmd('b4', `SEARCH ${'NOT '.repeat(200)}ALL`), /^b4 BAD/m, 'nesting is bounded');
  t.regex(await c.cmd('b5', 'SEARCH OR ALL'), /^b5 BAD/m);
  t.regex(await c.cmd('b6', 'UID STORE 4294967296 FLAGS ()'), /^b6 BAD/m);
  t.regex(await c.cmd('b7', 'NOOP'), /^b7 OK/m);
});

test('giant literals and lines: a synchronising literal is refused before it is sent, a non-synchronising one or an endless line ends the connection', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('a', 'LOGIN {999999999}'), /^a BAD literal too large/m);
  t.regex(await c.cmd('b', `LOGIN ${box.address} ${PASSWORD}`), /^b OK/m, 'the session goes on');
  t.regex(await c.cmd('c', 'APPEND INBOX {30000000}'), /^c BAD \[TOOBIG\] literal too large/m);
  const from = c.text().length;
  c.send('d LOGIN {5}\r\n');
  await c.until(/^\+ /, 15_000, from);
  c.send('x@y.z {3}\r\n');
  await c.until(/^\+ /, 15_000, c.text().length - 40 > from ? c.text().length - 40 : from);
  c.send('abc\r\n');
  t.regex(await c.until(/^d (OK|NO|BAD)/, 15_000, from), /^d BAD/m, 'LOGIN after LOGIN, read through two literals');

  const d = await rawImap(t, imapPort);
  d.send('e LOGIN {999999999+}\r\n');
  await d.until(/^\* BYE \[TOOBIG\]/);
  for (let i = 0; i < 200 && !d.closed; i++) await new Promise((r) => setTimeout(r, 20));
  t.true(d.closed);

  const e = await rawImap(t, imapPort);
  e.send('f ' + 'A'.repeat(70 * 1024));
  await e.until(/^\* BYE line too long/);
  for (let i = 0; i < 200 && !e.closed; i++) await new Promise((r) => setTimeout(r, 20));
  t.true(e.closed);

  const f = await rawImap(t, imapPort);
  t.regex(await f.cmd('g', 'NOOP'), /^g OK/m, 'the server still serves');
});
