import test, { type ExecutionContext } from 'ava';
import { startTestApp } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { CommandReader } from '../../src/managesieve/parser.js';
import { rawSieve, type RawSieve } from './client.js';

const LINES_PER_PHASE = 400;
const PHASE_MS = 20_000;

/** A small seeded PRNG (mulberry32), so a failure can be replayed from its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]! };
}

const COMMANDS = ['CAPABILITY', 'NOOP', 'LOGOUT', 'STARTTLS', 'AUTHENTICATE', 'UNAUTHENTICATE', 'HAVESPACE', 'PUTSCRIPT', 'LISTSCRIPTS',
  'SETACTIVE', 'GETSCRIPT', 'DELETESCRIPT', 'RENAMESCRIPT', 'CHECKSCRIPT', 'noop', 'X', ''];
const PIECES = ['"a"', '""', '"\\\\"', '"\\""', '"unterminated', '{3+}\r\nabc', '{0}\r\n', '{5}\r\nab', '{x+}', '{99999999999+}', '(', ')',
  '"PLAIN"', '123', '-1', '*', '"\u00e9t\u00e9"', '\u0000', '\r', '\\', '{2+}\r\n\r\n', '"keep;"', '"require [\\"fileinto\\"];"'];

/** One hostile line: a command name (or none) and random pieces, sometimes raw bytes, always ending in CRLF or LF. */
function hostileLine(r: ReturnType<typeof prng>): Buffer {
  if (r.next() < 0.1) return Buffer.from(Array.from({ length: 1 + r.int(300) }, () => r.int(256)).concat([13, 10]));
  const parts = [r.pick(COMMANDS)];
  for (let i = r.int(5); i > 0; i--) parts.push(r.pick(PIECES));
  return Buffer.from(`${parts.join(r.next() < 0.9 ? ' ' : '')}${r.next() < 0.9 ? '\r\n' : '\n'}`, 'utf8');
}

/**
 * Sends hostile lines, each followed by a NOOP with a tag that must come back (`OK (TAG "sN")`).
 * A line may leave the session inside a literal or a SASL exchange: then padding and a second
 * sentinel must be answered. A closed connection must have said BYE, and is opened again.
 */
async function fuzz(t: ExecutionContext, open: () => Promise<RawSieve>, seed: number) {
  const r = prng(seed);
  const deadline = Date.now() + PHASE_MS;
  let c = await open();
  const failures: string[] = [];
  let sent = 0;
  let byes = 0;
  for (let n = 0; n < LINES_PER_PHASE && Date.now() < deadline; n++) {
    const line = hostileLine(r);
    c.send(line);
    c.send(`NOOP "s${n}"\r\n`);
    sent++;
    let said = '';
    let answered = false;
    for (let k = 0; k < 6 && !answered; k++) {
      let got: string;
      try {
        got = await c.response(k === 0 ? 2_000 : 5_000);
      } catch {
        if (c.closed) break;
        // Stuck in a literal or SASL exchange: pad it out and ask again.
        c.send(`${'x'.repeat(64)}\r\n*\r\nNOOP "t${n}"\r\n`);
        continue;
      }
      said += got;
      if (new RegExp(`^OK \\(TAG "[st]${n}"\\)`, 'm').test(got)) answered = true;
      if (/^BYE/m.test(got)) break;
    }
    if (!answered) {
      if (!c.closed && !/^BYE/m.test(said)) failures.push(`line ${n} left the session silent: ${JSON.stringify(line.toString('latin1').slice(0, 120))}`);
      else if (!/^BYE/m.test(said) && !/^(LOGOUT|STARTTLS)\b/i.test(line.toString("latin1"))) failures.push(`line ${n} closed the connection without BYE: ${JSON.stringify(line.toString('latin1').slice(0, 120))}`);
      else byes++; // LOGOUT ends a session with OK; STARTTLS then plain text fails its handshake
      c = await open();
    }
    if (failures.length > 3) break;
  }
  t.deepEqual(failures, []);
  t.true(sent > 20, `only ${sent} lines in ${PHASE_MS} ms`);
  t.log(`seed ${seed}: ${sent} lines, ${byes} sessions ended`);
}

test('hostile lines before login: every one answered, or BYE; the server keeps serving', async (t) => {
  const app = await startTestApp(t);
  await fuzz(t, async () => { const c = await rawSieve(t, app.managesievePort); await c.response(); return c; }, 4190);
  const c = await rawSieve(t, app.managesievePort);
  t.regex(await c.response(), /^OK/m);
});

test('hostile lines after login over TLS; the mailbox keeps at most 10 scripts and stays readable', async (t) => {
  const app = await startTestApp(t);
  const { key, address } = await makeInbox(app);
  const open = async () => {
    const c = await rawSieve(t, app.managesievePort);
    await c.response();
    await c.starttls();
    const ok = await c.login(address, 'password-123');
    if (!ok.startsWith('OK')) throw new Error(`login: ${ok}`);
    return c;
  };
  await fuzz(t, open, 5804);
  const list = await app.get(`/v1/mailboxes/${encodeURIComponent(address)}/sieve`, key);
  t.is(list.status, 200);
  t.true(list.body.data.length <= 10);
});

test('the command reader takes any bytes in any split without throwing, and ends a flood with a fatal result', (t) => {
  const r = prng(1);
  for (let round = 0; round < 300; round++) {
    const reader = new CommandReader();
    const input = Buffer.concat(Array.from({ length: 1 + r.int(8) }, () => hostileLine(r)));
    let at = 0;
    while (at < input.length) {
      const step = 1 + r.int(40);
      reader.push(input.subarray(at, at + step));
      at += step;
      for (let k = 0; k < 50 && reader.next(); k++);
    }
  }
  const flood = new CommandReader();
  flood.push(Buffer.alloc(20_000, 0x61));
  t.is(flood.next()?.kind, 'fatal');
  const spaces = new CommandReader();
  spaces.push(Buffer.alloc(20_000, 0x20));
  t.is(spaces.next()?.kind, 'fatal');
});
