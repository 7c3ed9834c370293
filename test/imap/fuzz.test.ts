import test from 'ava';
import tls from 'node:tls';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { hostileLine, prng } from './fuzz-lines.js';

const LINES_PER_PHASE = 1000;
const PHASE_MS = 20_000;
const SECRET = 'OTHER-MAILBOX-SECRET-7f3a';

/** A bare TLS connection that keeps everything it reads, and notices BYE and close. */
async function connect(port: number) {
  const s = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
  const c = { text: '', closed: false, socket: s };
  s.on('data', (d: Buffer) => { c.text += d.toString('latin1'); });
  s.on('error', () => undefined);
  s.on('close', () => { c.closed = true; });
  await waitFor(c, /^\* OK/m, 0, 20_000);
  return c;
}
type Conn = Awaited<ReturnType<typeof connect>>;

/** Waits (bounded) until `re` matches the text read since `from`; false when the connection closed first or time ran out. */
async function waitFor(c: Conn, re: RegExp, from: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (re.test(c.text.slice(from))) return true;
    if (c.closed || Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * Sends `count` hostile lines, each followed by a NOOP sentinel. A line may leave the server inside
 * a literal, AUTHENTICATE or IDLE; then padding completes it and a second sentinel must be answered.
 * A closed connection must have said BYE; it is replaced by a fresh one (`open`).
 */
async function fuzz(t: import('ava').ExecutionContext, open: () => Promise<Conn>, seed: number) {
  const r = prng(seed);
  const deadline = Date.now() + PHASE_MS;
  let c = await open();
  let transcript = '';
  const stats = { sent: 0, tagged: 0, byes: 0 };
  const failures: string[] = [];
  for (let n = 0; n < LINES_PER_PHASE && Date.now() < deadline; n++) {
    const line = hostileLine(r, seed * 10_000 + n);
    const from = c.text.length;
    c.socket.write(line.bytes);
    c.socket.write(`s${n} NOOP\r\n`);
    stats.sent++;
    let answered = await waitFor(c, new RegExp(`^s${n} (OK|NO|BAD)`, 'm'), from, 400);
    if (!answered && !c.closed) {
      c.socket.write(`${'x'.repeat(600)}\r\nDONE\r\n*\r\nt${n} NOOP\r\n`);
      answered = await waitFor(c, new RegExp(`^[st]${n} (OK|NO|BAD)`, 'm'), from, 15_000);
    }
    const said = c.text.slice(from);
    if (line.tag && new RegExp(`^${line.tag} (OK|NO|BAD)`, 'm').test(said)) stats.tagged++;
    if (!answered) {
      if (!c.closed) failures.push(`line ${n} left the connection silent: ${JSON.stringify(line.bytes.toString('latin1').slice(0, 200))}`);
      else if (!/^\* BYE/m.test(said)) failures.push(`line ${n} closed the connection without BYE: ${JSON.stringify(line.bytes.toString('latin1').slice(0, 200))}`);
      else stats.byes++;
    } else if (line.tag && !new RegExp(`^${line.tag} (OK|NO|BAD)`, 'm').test(said) && !/^\* BYE/m.test(said)) {
      failures.push(`line ${n} (tag ${line.tag}) got no tagged answer: ${JSON.stringify(line.bytes.toString('latin1').slice(0, 200))} -> ${JSON.stringify(said.slice(0, 300))}`);
    }
    if (c.closed || !answered) {
      transcript += c.text;
      c.socket.destroy();
      c = await open();
    }
  }
  transcript += c.text;
  c.socket.destroy();
  t.deepEqual(failures.slice(0, 5), [], 'every hostile line is answered by its tag or ends in BYE');
  return { stats, transcript };
}

test('a seeded stream of hostile lines, unauthenticated and selected: every line answered, no crash, no other mailbox\'s data', async (t) => {
  t.timeout(180_000);
  const { app, box, imapPort } = await imapApp(t, { count: 2 });
  const mine = box.mailboxes[0]!.address;
  const other = box.mailboxes[1]!.address;
  for (let i = 0; i < 3; i++) await deliver(app, box.key, mine, { subject: `mine ${i}`, body_text: `own text ${i}` });
  await deliver(app, box.key, other, { subject: SECRET, body_text: `${SECRET} body` });
  await waitForEmails(app, box.key, 3, `mailbox_id=${box.mailboxes[0]!.id}`);
  await waitForEmails(app, box.key, 1, `mailbox_id=${box.mailboxes[1]!.id}`);

  // Selected state first: the unauthenticated phase's failed LOGINs lock the address out (section 13).
  const selected = async () => {
    const c = await connect(imapPort);
    c.socket.write(`l LOGIN ${mine} ${PASSWORD}\r\nm SELECT INBOX\r\n`);
    if (!(await waitFor(c, /^m OK/m, 0, 20_000))) throw new Error(`could not select: ${c.text.slice(-500)}`);
    return c;
  };
  const a = await fuzz(t, selected, 1);
  const b = await fuzz(t, () => connect(imapPort), 2);
  t.log('selected', a.stats, 'unauthenticated', b.stats);
  t.true(a.stats.sent >= 100 && b.stats.sent >= 100, 'enough lines were sent within the time bound');
  t.true(a.stats.tagged > a.stats.sent / 2 && b.stats.tagged > b.stats.sent / 2, 'most well-tagged lines were answered by their tag');
  t.false((a.transcript + b.transcript).includes(SECRET), 'nothing of the other mailbox was ever returned');

  // The server still serves: a fresh connection answers, and so does the API.
  const fresh = await rawImap(t, imapPort);
  t.regex(await fresh.cmd('z', 'CAPABILITY'), /^z OK/m);
  t.is((await app.get('/health')).status, 200);
});
