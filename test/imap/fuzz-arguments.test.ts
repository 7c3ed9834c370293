import test from 'ava';
import tls from 'node:tls';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp } from '../helpers/imap.js';
import { exchange, loggedIn, open, prng, show, stillServes, waitClosed, waitFor, type Wire } from './fuzz-wire.js';

/*
 * 8-bit bytes, invalid UTF-8, control characters and NUL in every argument of every command, as an
 * atom, a quoted string or a literal, in every state (not logged in, logged in, selected, after
 * LOGOUT). Each input gets its tagged OK/NO/BAD or an orderly BYE (never an internal error: on
 * PostgreSQL a NUL in a name was one), and a real client is served afterwards.
 */

const BUDGET_MS = 14_000;

/** Commands with their arguments; `{{x}}` is an argument, x its ordinary value. */
const COMMANDS = [
  'CAPABILITY{{}}', 'NOOP{{}}', 'LOGIN {{user@x.test}} {{pw}}', 'AUTHENTICATE {{PLAIN}} {{AGEAYg==}}', 'ID ({{name}} {{x}})', 'ENABLE {{CONDSTORE}}',
  'STARTTLS{{}}', 'SELECT {{INBOX}}', 'EXAMINE {{INBOX}} ({{CONDSTORE}})', 'CREATE {{Fuzz}}', 'DELETE {{Fuzz}}', 'RENAME {{Fuzz}} {{Fuzz2}}',
  'SUBSCRIBE {{INBOX}}', 'UNSUBSCRIBE {{Trash}}', 'LIST {{""}} {{*}}', 'LIST ({{SUBSCRIBED}}) "" "*"', 'LIST "" "*" RETURN ({{CHILDREN}})', 'LSUB {{""}} {{%}}',
  'STATUS {{INBOX}} ({{MESSAGES}})', 'APPEND {{INBOX}} ({{\\Seen}}) {{"01-Jan-2024 00:00:00 +0000"}} {5+}\r\nhello', 'GETQUOTA {{""}}', 'GETQUOTAROOT {{INBOX}}',
  'NAMESPACE{{}}', 'SEARCH CHARSET {{UTF-8}} SUBJECT {{x}}', 'SEARCH HEADER {{X-Foo}} {{bar}}', 'SEARCH KEYWORD {{$Label}}', 'SEARCH SINCE {{1-Jan-2024}}',
  'SEARCH {{ALL}}', 'UID SEARCH RETURN ({{MIN}}) {{ALL}}', 'SEARCH TEXT {{hello}}', 'STORE {{1}} {{+FLAGS}} ({{$Fuzz}})', 'UID STORE {{1:*}} -FLAGS.SILENT ({{\\Flagged}})',
  'FETCH {{1}} ({{FLAGS}})', 'FETCH 1 BODY.PEEK[{{HEADER.FIELDS}} ({{SUBJECT}})]', 'FETCH 1 BODY.PEEK[{{1}}]<{{0}}.{{10}}>', 'UID FETCH {{1:*}} {{UID}}',
  'COPY {{1}} {{Trash}}', 'UID MOVE {{999}} {{Trash}}', 'UID EXPUNGE {{999}}', 'CHECK{{}}', 'IDLE{{}}', 'UNSELECT{{}}', 'CLOSE{{}}', 'EXPUNGE{{}}',
  '{{NOOP}}', 'UID {{FETCH}} 1 FLAGS',
];

/** Hostile bytes: NUL, 8-bit, invalid and valid UTF-8, controls, wildcards, long runs. */
function hostile(r: () => number): Buffer {
  const pieces = [
    () => Buffer.from([0]), () => Buffer.from([0x80 + Math.floor(r() * 128)]), () => Buffer.from([0xc3]), () => Buffer.from([0xed, 0xa0, 0x80]),
    () => Buffer.from([0xf4, 0x90, 0x80, 0x80]), () => Buffer.from([0xc0, 0xaf]), () => Buffer.from('ü😀', 'utf8'), () => Buffer.from([1 + Math.floor(r() * 31)]),
    () => Buffer.from([0x7f]), () => Buffer.from('*'), () => Buffer.from('%'), () => Buffer.from('a'.repeat(1 + Math.floor(r() * 2000))),
    () => Buffer.from('INBOX'), () => Buffer.from('/'), () => Buffer.from(['\\', '"', '(', ')', '[', ']', '{', '}', '<', '>', ' '][Math.floor(r() * 11)]!),
  ];
  const parts: Buffer[] = [];
  for (let i = 1 + Math.floor(r() * 5); i > 0; i--) parts.push(pieces[Math.floor(r() * pieces.length)]!());
  // CR and LF end lines where the generator puts them, not inside an argument.
  return Buffer.from(Buffer.concat(parts).map((b) => (b === 10 || b === 13 ? 0 : b)));
}

/** The bytes as an atom, a quoted string or a literal (non-synchronising: synchronising ones are fuzz-literals.test.ts's). */
function form(r: () => number, b: Buffer): Buffer {
  const k = r();
  if (k < 0.4) return b;
  if (k < 0.75) return Buffer.concat([Buffer.from('"'), Buffer.from(b.toString('latin1').replace(/[\\"]/g, (c) => '\\' + c), 'latin1'), Buffer.from('"')]);
  return Buffer.concat([Buffer.from(`{${b.length}+}\r\n`), b]);
}

/** A command of COMMANDS with one argument or more made hostile. */
function input(r: () => number, tag: string): Buffer {
  const template = COMMANDS[Math.floor(r() * COMMANDS.length)]!;
  const slots = [...template.matchAll(/\{\{(.*?)\}\}/g)];
  const target = Math.floor(r() * slots.length);
  const out: Buffer[] = [Buffer.from(`${tag} `)];
  let at = 0;
  slots.forEach((m, i) => {
    out.push(Buffer.from(template.slice(at, m.index)));
    const bad = i === target || r() < 0.2;
    out.push(bad ? form(r, hostile(r)) : Buffer.from(m[1]!));
    at = m.index! + m[0].length;
  });
  out.push(Buffer.from(`${template.slice(at)}\r\n`));
  return Buffer.concat(out);
}

async function campaign(seed: number, connect: () => Promise<Wire>, count: number) {
  const r = prng(seed);
  const deadline = Date.now() + BUDGET_MS;
  const stats = { sent: 0, answered: 0, bye: 0 };
  let c = await connect();
  for (let i = 0; i < count && Date.now() < deadline; i++) {
    const tag = `h${seed}x${i}`;
    const bytes = input(r, tag);
    const outcome = await exchange(c, bytes, tag, { label: `seed ${seed} input ${i} ${show(bytes)}` });
    stats.sent++;
    stats[outcome]++;
    if (c.closed) { c.socket.destroy(); c = await connect(); }
  }
  c.socket.destroy();
  return stats;
}

test('8-bit, NUL and control bytes in every argument of every command, in every state', async (t) => {
  t.timeout(120_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'to fetch', body_text: 'hello there' });
  await waitForEmails(app, box.key, 1);

  const a = await campaign(11, () => open(imapPort), 500);
  const b = await campaign(12, () => loggedIn(imapPort, box.address), 500);
  const c = await campaign(13, () => loggedIn(imapPort, box.address, { select: true }), 500);
  t.log('notauth', a, 'auth', b, 'selected', c);
  for (const s of [a, b, c]) t.true(s.sent >= 20 && s.answered > s.sent / 2, 'inputs sent and mostly answered within the bound');

  await deliver(app, box.key, box.address, { subject: 'after arguments' });
  await stillServes(t, app, imapPort, box.address, 'after arguments');
});

test('LIST patterns of many wildcards are answered at once (a regular expression made them take minutes, and the process with them)', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await loggedIn(imapPort, box.address);
  const patterns = [`"${'*'.repeat(200)}q"`, `"${'%*'.repeat(100)}q"`, `"${'*a'.repeat(100)}q"`, `"${'*'.repeat(60000)}"`, `${'%'.repeat(300)}x`];
  for (const [i, pattern] of patterns.entries()) {
    t.is(await exchange(c, `w${i} LIST "" ${pattern}\r\n`, `w${i}`), 'answered', pattern.slice(0, 20));
    t.regex(c.text, new RegExp(`^w${i} OK`, 'm'));
  }
  t.is(await exchange(c, 'w9 LIST "" "*"\r\n', 'w9'), 'answered');
  t.regex(c.text, /^\* LIST \([^)]*\) "\/" INBOX\r\n[^]*^w9 OK/m, 'ordinary patterns still list');
  t.is((await app.get('/health')).status, 200);
});

test('commands after LOGOUT in the same packet are not run: BYE, the tagged OK, the close', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const r = prng(14);
  const states = [() => open(imapPort), () => loggedIn(imapPort, box.address, { select: true })];
  for (let i = 0; i < 12; i++) {
    const c = await states[i % 2]!();
    const from = c.text.length;
    const after = input(r, `z${i}`);
    c.socket.write(Buffer.concat([Buffer.from(`y${i} LOGOUT\r\n`), after, Buffer.from(`v${i} NOOP\r\n`)]));
    t.true(await waitFor(c, new RegExp(`^\\* BYE[^]*^y${i} OK`, 'm'), from, 15_000), `LOGOUT answered before ${show(after)}`);
    t.true(await waitClosed(c), 'and the connection closed');
    t.notRegex(c.text.slice(from), new RegExp(`^(z|v)${i} `, 'm'), `nothing after LOGOUT ran: ${show(after)}`);
    c.socket.destroy();
  }
});

test('the STARTTLS port in clear text: every input answered, no login and no mail before TLS, nothing sent after STARTTLS in the same packet runs', async (t) => {
  t.timeout(90_000);
  const { app, box, imapPort, imapStarttlsPort } = await imapApp(t);
  const plain = () => open(imapStarttlsPort, '127.0.0.2', { plain: true });
  const r = prng(15);
  let c = await plain();
  const deadline = Date.now() + BUDGET_MS;
  let sent = 0;
  const clear: string[] = [];
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    const tag = `k${i}`;
    // Now and then the real address and password, which must still be refused in clear text.
    const bytes = r() < 0.1 ? Buffer.from(`${tag} LOGIN ${box.address} password-123\r\n`) : input(r, tag);
    if (bytes.includes('STARTTLS')) continue; // the upgrade is the next test's
    await exchange(c, bytes, tag, { label: `clear-text input ${i} ${show(bytes)}` });
    sent++;
    clear.push(c.text);
    if (c.closed) { c.socket.destroy(); c = await plain(); }
  }
  c.socket.destroy();
  t.true(sent >= 20);
  for (const text of clear) t.notRegex(text, /^k\d+ OK \[CAPABILITY[^\r]*\] (LOGIN|AUTHENTICATE) completed/m, 'no login in clear text');

  // STARTTLS with a login and a command pipelined behind it: those bytes were sent in clear and are dropped.
  const s = await plain();
  s.socket.write(`u1 STARTTLS\r\nu2 LOGIN ${box.address} password-123\r\nu3 SELECT INBOX\r\n`);
  t.true(await waitFor(s, /^u1 OK/m, 0, 15_000));
  const secure = tls.connect({ socket: s.socket, rejectUnauthorized: false });
  let after = '';
  secure.on('data', (d: Buffer) => { after += d.toString('latin1'); });
  secure.on('error', () => undefined);
  await new Promise<void>((resolve) => secure.once('secureConnect', () => resolve()));
  secure.write('u4 NOOP\r\n');
  const until = Date.now() + 15_000;
  while (!/^u4 OK/m.test(after) && Date.now() < until) await new Promise((res) => setTimeout(res, 5));
  t.regex(after, /^u4 OK/m, 'the session goes on over TLS');
  t.notRegex(s.text + after, /^u[23] /m, 'nothing sent in clear text after STARTTLS ran');
  secure.destroy();

  await deliver(app, box.key, box.address, { subject: 'after clear text' });
  await stillServes(t, app, imapPort, box.address, 'after clear text');
});
