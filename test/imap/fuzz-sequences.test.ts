import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp } from '../helpers/imap.js';
import { exchange, loggedIn, prng, show, stillServes, type Wire } from './fuzz-wire.js';

/*
 * Huge and malformed sequence sets in every command that takes one, by number and by UID: ranges to
 * 2^32-1 and past it, `*:*`, 0, reversed and empty ranges, `$` before any SEARCH SAVE, and lists of
 * thousands of items up to the line bound (a longer line is an orderly BYE). Each gets its tagged
 * answer or BYE, and a real client is served afterwards.
 */

const BUDGET_MS = 25_000;

const EDGES = ['1', '*', '0', '1:*', '*:*', '*:1', '1:4294967295', '4294967295', '4294967296', '4294967295:1', '2:1', '1:0', '0:*', '$', '1,*',
  '18446744073709551616', '99999999999999999999999', '-1', '1:-1', '1::2', '1,,2', ',1', '1,', ':', '1:', ':1', '**', '*1', '1.5', '1e3', '0x10', '', '1 :2',
  '٣', '１', '1\0', '1\xff'];

/** A sequence set: an edge case, a random list of ranges, or a list of `n` items (up to and over the 64 KiB line). */
function sequence(r: () => number): string {
  const k = r();
  if (k < 0.45) return EDGES[Math.floor(r() * EDGES.length)]!;
  const n = k < 0.85 ? 1 + Math.floor(r() * 50) : [1000, 5000, 10_000, 12_000, 100_000][Math.floor(r() * 5)]!;
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = r() < 0.1 ? '*' : String(n > 100 ? i + 1 : Math.floor(r() * 4294967296));
    items.push(r() < 0.3 ? `${a}:${r() < 0.2 ? '*' : Math.floor(r() * 10)}` : a);
  }
  return items.join(',');
}

const COMMANDS = ['FETCH @ (FLAGS)', 'UID FETCH @ (UID FLAGS)', 'FETCH @ (FLAGS) (CHANGEDSINCE 1)', 'UID FETCH @ FLAGS (CHANGEDSINCE 0 VANISHED)',
  'STORE @ +FLAGS.SILENT ($Seq)', 'UID STORE @ -FLAGS ($Seq)', 'STORE @ (UNCHANGEDSINCE 1) +FLAGS (\\Flagged)', 'SEARCH @', 'UID SEARCH UID @',
  'SEARCH NOT @', 'SEARCH OR @ UID @', 'UID SEARCH RETURN (SAVE) @', 'COPY @ Trash', 'UID COPY @ Archive', 'UID MOVE @ NoSuchFolder', 'UID EXPUNGE @',
  'SELECT INBOX (QRESYNC (1 1 @))', 'FETCH @ BODY.PEEK[HEADER]<0.10>'];

test('huge and malformed sequence sets by number and UID', async (t) => {
  t.timeout(120_000);
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 3; i++) await deliver(app, box.key, box.address, { subject: `seq ${i}` });
  await waitForEmails(app, box.key, 3);
  const r = prng(21);
  const connect = async () => {
    const c = await loggedIn(imapPort, box.address, { select: true });
    c.socket.write('e ENABLE QRESYNC\r\n');
    return c;
  };
  let c: Wire = await connect();
  const deadline = Date.now() + BUDGET_MS;
  const stats = { sent: 0, answered: 0, bye: 0 };
  for (let i = 0; i < 800 && Date.now() < deadline; i++) {
    const tag = `s${i}`;
    const command = COMMANDS[Math.floor(r() * COMMANDS.length)]!.replace('@', () => sequence(r));
    const bytes = Buffer.from(`${tag} ${command}\r\n`, 'latin1');
    const outcome = await exchange(c, bytes, tag, { label: `sequence input ${i} ${show(bytes)} (${bytes.length} bytes)` });
    stats.sent++;
    stats[outcome]++;
    if (c.closed) { c.socket.destroy(); c = await connect(); }
  }
  t.log(stats);
  t.true(stats.sent >= 20 && stats.answered > stats.sent / 2);

  // The exact answers of the classic cases, on a folder of three messages.
  const cases: Array<[string, RegExp]> = [
    ['FETCH 0 FLAGS', /^x BAD/m], ['FETCH 4294967296 FLAGS', /^x BAD/m], ['FETCH 1:4294967295 FLAGS', /^x BAD/m], ['UID FETCH 1:4294967295 UID', /^\* 1 FETCH[^]*^x OK/m],
    ['FETCH *:* UID', /^\* 3 FETCH[^]*^x OK/m], ['UID FETCH 4294967295 UID', /^x OK/m], ['SEARCH 1:4294967295', /^\* SEARCH 1 2 3\r\nx OK/m], ['FETCH $ UID', /^x (OK|BAD)/m],
  ];
  for (const [command, answer] of cases) {
    const from = c.text.length;
    t.is(await exchange(c, `x ${command}\r\n`, 'x'), 'answered', command);
    t.regex(c.text.slice(from), answer, command);
  }
  c.socket.destroy();

  await deliver(app, box.key, box.address, { subject: 'after sequences' });
  await stillServes(t, app, imapPort, box.address, 'after sequences');
});
