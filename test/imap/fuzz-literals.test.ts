import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp } from '../helpers/imap.js';
import { exchange, loggedIn, open, prng, show, stillServes, tagged, waitClosed, waitFor, type Wire } from './fuzz-wire.js';

/*
 * Literals of every announced size and deeply nested parentheses, in the arguments of every command
 * that takes a string or a list: each connection gets its tagged OK/NO/BAD or an orderly BYE, and a
 * real client is served afterwards (fuzz-wire.ts).
 */

const BUDGET_MS = 12_000;

/** Commands with a string argument, `@` where the literal goes, in the state they are allowed in. */
const NOTAUTH = ['LOGIN @ pw', 'LOGIN user@x.test @', 'AUTHENTICATE PLAIN @', 'ID (@ "v")'];
const AUTHED = ['SELECT @', 'EXAMINE @', 'CREATE @', 'DELETE @', 'RENAME @ "b"', 'RENAME "Trash" @', 'SUBSCRIBE @', 'STATUS @ (MESSAGES)',
  'LIST @ "*"', 'LIST "" @', 'LSUB "" @', 'APPEND @ {5}\r\nhello', 'GETQUOTAROOT @', 'ID ("k" @)'];
const SELECTED = ['SEARCH SUBJECT @', 'SEARCH CHARSET @ ALL', 'SEARCH HEADER @ "x"', 'SEARCH BODY @', 'UID SEARCH TEXT @', 'FETCH 1 BODY[HEADER.FIELDS (@)]',
  'COPY 1 @', 'MOVE 9 @', 'SEARCH MODSEQ @ all 1'];

/** Announced sizes: right, zero, short, long, absurd, over each bound, malformed; `short` is how many bytes it holds back. */
function literal(r: () => number, body: Buffer): { head: string; bytes: Buffer; short: number } {
  const n = body.length;
  const k = Math.floor(r() * 14);
  const plus = r() < 0.4 ? '+' : '';
  const lit = (size: number | string, sent: Buffer) => {
    const announced = typeof size === 'number' && size <= 26214400 ? size : 0;
    return { head: `{${size}${plus}}`, bytes: sent, short: Math.max(0, announced - sent.length) };
  };
  switch (k) {
    case 0: return lit(n, body);
    case 1: return lit(0, Buffer.alloc(0));
    case 2: return lit(n + 1 + Math.floor(r() * 20), body); // truncated: the server waits for bytes that come as padding
    case 3: return lit(Math.max(0, n - 1 - Math.floor(r() * n)), body); // longer than announced: the rest is grammar
    case 4: return lit(4294967296, body);
    case 5: return lit(4294967295, body);
    case 6: return lit('99999999999', body);
    case 7: return lit(-1, body);
    case 8: return lit('', body);
    case 9: return lit(65536 + Math.floor(r() * 3), body);
    case 10: return lit(26214401, body);
    case 11: return { head: `~{${n}}`, bytes: body, short: 0 };
    case 12: return lit(`${n} `, body);
    default: return lit(n, Buffer.concat([body, Buffer.from([0])]).subarray(0, n));
  }
}

const BODIES = [Buffer.from('INBOX'), Buffer.from('a\0b'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('Übersicht/naïve', 'utf8'), Buffer.from('(x'), Buffer.from('"'), Buffer.from('\r\n'), Buffer.from('')];

/** Runs `count` seeded literal inputs on connections made by `connect`; a connection that said BYE is replaced. */
async function campaign(seed: number, templates: string[], connect: () => Promise<Wire>, count: number) {
  const r = prng(seed);
  const deadline = Date.now() + BUDGET_MS;
  const stats = { sent: 0, answered: 0, bye: 0 };
  let c = await connect();
  for (let i = 0; i < count && Date.now() < deadline; i++) {
    const template = templates[Math.floor(r() * templates.length)]!;
    const body = r() < 0.7 ? BODIES[Math.floor(r() * BODIES.length)]! : Buffer.from(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256)));
    const l = literal(r, body);
    const tag = `q${seed}x${i}`;
    const [before, after] = template.split('@') as [string, string];
    const head = Buffer.from(`${tag} ${before}${l.head}\r\n`);
    const tail = Buffer.concat([l.bytes, Buffer.from(`${after}\r\n`)]);
    const label = `seed ${seed} input ${i} ${show(Buffer.concat([head, tail]))}`;
    // The bytes a truncated literal held back, then a line end, in a write of their own: the server must then answer.
    const pad = Buffer.from(`${'x'.repeat(l.short)}\r\n`);
    let outcome: 'answered' | 'bye';
    if (/^\{\d+\}$/.test(l.head)) {
      // Synchronising: the head, then the bytes once "+" came; none when the server refused at once.
      const from = c.text.length;
      c.socket.write(head);
      await waitFor(c, new RegExp(`^\\+ |${tagged(tag).source}|^\\* BYE`, 'm'), from, 15_000);
      const said = c.text.slice(from);
      if (tagged(tag).test(said)) outcome = 'answered';
      else if (/^\* BYE/m.test(said)) outcome = await exchange(c, '', tag, { label });
      else if (/^\+ /m.test(said)) outcome = await exchange(c, l.short ? [tail, pad] : tail, tag, { label, pad });
      else throw new Error(`${label}: neither "+" nor an answer after the literal's announcement; read ${JSON.stringify(said)}`);
    } else outcome = await exchange(c, l.short ? [Buffer.concat([head, tail]), pad] : Buffer.concat([head, tail]), tag, { label, pad });
    stats.sent++;
    stats[outcome]++;
    // Whatever was left of the input (bytes after a refused or short literal) is read as commands; the next one is still answered.
    const probe = `p${seed}x${i}`;
    if (!c.closed && (await exchange(c, `${probe} NOOP\r\n`, probe, { label: `NOOP after ${label}` })) === 'bye') stats.bye++;
    if (c.closed) { c.socket.destroy(); c = await connect(); }
  }
  c.socket.destroy();
  return stats;
}

test('literals of every size in every string argument, before login, logged in and selected', async (t) => {
  t.timeout(150_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'before', body_text: 'a message to search' });
  await waitForEmails(app, box.key, 1);

  // The {0} a client waits on: it must get "+" (it hung without one).
  const z = await open(imapPort);
  z.socket.write('z1 LOGIN {0}\r\n');
  t.true(await waitFor(z, /^\+ /m, 0, 10_000), '{0} gets its continuation');
  z.socket.write(' {0}\r\n');
  t.true(await waitFor(z, /^\+ [^\r]*\r\n[^]*^\+ /m, 0, 10_000), 'and the second {0} too');
  z.socket.write('\r\n');
  t.true(await waitFor(z, /^z1 NO/m, 0, 30_000), 'the empty login is refused');
  z.socket.destroy();

  const a = await campaign(1, NOTAUTH, () => open(imapPort), 250);
  const b = await campaign(2, AUTHED, () => loggedIn(imapPort, box.address), 300);
  const c = await campaign(3, SELECTED, () => loggedIn(imapPort, box.address, { select: true }), 300);
  t.log('notauth', a, 'auth', b, 'selected', c);
  for (const s of [a, b, c]) t.true(s.sent >= 20 && s.answered > 0, 'inputs sent and answered within the bound');

  // A literal cut short by a client that goes away: the server keeps no state of it and serves the next one.
  for (const cut of ['t1 LOGIN {20}\r\nabc', 't2 LOGIN {20+}\r\nabc', 't3 LOGIN "a" {5}\r\n']) {
    const gone = await open(imapPort);
    gone.socket.write(cut);
    gone.socket.destroy();
  }
  const next = await open(imapPort);
  t.is(await exchange(next, 't4 CAPABILITY\r\n', 't4'), 'answered');
  next.socket.destroy();

  // The largest literals: a synchronising one over the bound is refused before it is sent; a non-synchronising one ends the connection.
  const big = await loggedIn(imapPort, box.address);
  t.is(await exchange(big, 'g1 APPEND INBOX {26214401}\r\n', 'g1'), 'answered');
  t.regex(big.text, /^g1 BAD \[TOOBIG\]/m);
  t.is(await exchange(big, 'g2 APPEND INBOX {26214401+}\r\nabc\r\n', 'g2'), 'bye');
  t.true(await waitClosed(big));

  await deliver(app, box.key, box.address, { subject: 'after literals' });
  await stillServes(t, app, imapPort, box.address, 'after literals');
});
