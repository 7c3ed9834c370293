import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp } from '../helpers/imap.js';
import { exchange, loggedIn, prng, stillServes } from './fuzz-wire.js';

/*
 * Parentheses nested far past any real client's, balanced or not, wherever a command takes a list:
 * each input gets its tagged answer or an orderly BYE (a line past 64 KiB), nothing recurses
 * without bound, and a real client is served afterwards.
 */

/** Parentheses `depth` deep around `inner`, balanced or not. */
const nest = (depth: number, inner: string, balance: 'both' | 'open' | 'close') =>
  `${balance === 'close' ? '' : '('.repeat(depth)}${inner}${balance === 'open' ? '' : ')'.repeat(depth)}`;

test('deeply nested and unbalanced parentheses in FETCH, SEARCH, STORE, APPEND, LIST, STATUS and ID', async (t) => {
  t.timeout(150_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'nested' });
  await waitForEmails(app, box.key, 1);
  const r = prng(4);
  const templates = [
    (n: string) => `FETCH 1 ${n}`, (n: string) => `UID FETCH 1:* ${n}`, (n: string) => `FETCH 1 (FLAGS) ${n}`,
    (n: string) => `SEARCH ${n}`, (n: string) => `SEARCH OR ${n} ALL`, (n: string) => `UID SEARCH RETURN ${n} ALL`, (n: string) => `SEARCH NOT ${n}`,
    (n: string) => `STORE 1 +FLAGS ${n}`, (n: string) => `STORE 1 ${n} FLAGS (\\Seen)`, (n: string) => `APPEND INBOX ${n} {5+}\r\nhello`,
    (n: string) => `LIST ${n} "" "*"`, (n: string) => `LIST "" ${n}`, (n: string) => `STATUS INBOX ${n}`, (n: string) => `ID ${n}`,
    (n: string) => `FETCH 1 BODY[HEADER.FIELDS ${n}]`, (n: string) => `ENABLE ${n}`,
  ];
  const inners = ['FLAGS', 'ALL', '\\Seen', 'UID', '"a"', '', 'MESSAGES', 'SUBJECT x', '1:*', 'CHANGEDSINCE 1'];
  const depths = [1, 2, 3, 49, 50, 51, 52, 200, 1000, 10_000, 32_000, 40_000];
  const deadline = Date.now() + 60_000;
  let c = await loggedIn(imapPort, box.address, { select: true });
  const stats = { sent: 0, answered: 0, bye: 0 };
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    const template = templates[i % templates.length]!;
    const depth = depths[Math.floor(r() * depths.length)]!;
    const balance = (['both', 'both', 'open', 'close'] as const)[Math.floor(r() * 4)]!;
    const tag = `n${i}`;
    const input = `${tag} ${template(nest(depth, inners[Math.floor(r() * inners.length)]!, balance))}\r\n`;
    const outcome = await exchange(c, input, tag, { label: `nesting input ${i} (depth ${depth}, ${balance})` });
    stats.sent++;
    stats[outcome]++;
    if (c.closed) { c.socket.destroy(); c = await loggedIn(imapPort, box.address, { select: true }); }
  }
  t.log(stats);
  t.true(stats.sent >= 20 && stats.answered > stats.sent / 2);
  // Nesting past the bound is refused as such; within it, it is searched.
  t.is(await exchange(c, `d1 SEARCH ${nest(60, 'ALL', 'both')}\r\n`, 'd1'), 'answered');
  t.regex(c.text, /^d1 BAD search too deeply nested/m);
  t.is(await exchange(c, `d2 SEARCH ${nest(20, 'ALL', 'both')}\r\n`, 'd2'), 'answered');
  t.regex(c.text, /^\* (E?SEARCH)[^\r]*\r\nd2 OK/m);
  c.socket.destroy();

  await deliver(app, box.key, box.address, { subject: 'after nesting' });
  await stillServes(t, app, imapPort, box.address, 'after nesting');
});
