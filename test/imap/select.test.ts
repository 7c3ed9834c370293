import test from 'ava';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';

// SELECT and EXAMINE in IMAP4rev1: \Recent (RFC 3501 2.3.2), [UNSEEN n], and FLAGS that list the
// keywords in use (a keyword new to the folder is announced with FLAGS before a FETCH shows it).

async function login(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  return c;
}

async function append(c: RawImap, tag: string, folder: string, flags = ''): Promise<void> {
  const msg = `From: a@x.example\r\nSubject: ${tag}\r\n\r\nbody\r\n`;
  const from = c.text().length;
  c.send(`${tag} APPEND ${folder} ${flags ? `(${flags}) ` : ''}{${msg.length}+}\r\n${msg}\r\n`);
  await c.until(new RegExp(`^${tag} OK`), 15_000, from);
}

test('\\Recent is given to the first read-write session only; EXAMINE looks without taking it; STATUS and SEARCH agree', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await login(t, imapPort, box.address);
  t.regex(await a.cmd('c', 'CREATE Work'), /^c OK/m);
  await append(a, 'p1', 'Work');
  await append(a, 'p2', 'Work', '\\Seen');
  const examined = await a.cmd('e', 'EXAMINE Work');
  t.regex(examined, /^\* 2 RECENT/m);
  t.regex(examined, /^\* OK \[UNSEEN 1\]/m);
  t.regex(await a.cmd('st', 'STATUS Work (RECENT MESSAGES)'), /^\* STATUS Work \(RECENT 2 MESSAGES 2\)/m);
  t.regex(await a.cmd('s', 'SELECT Work'), /^\* 2 RECENT/m, 'the first read-write session sees them recent');
  t.regex(await a.cmd('f', 'FETCH 1 FLAGS'), /^\* 1 FETCH \(FLAGS \(\\Recent\)\)/m);
  t.regex(await a.cmd('n', 'SEARCH NEW'), /^\* SEARCH 1\r?$/m);
  t.regex(await a.cmd('o', 'SEARCH OLD'), /^\* SEARCH\r?$/m);

  const b = await login(t, imapPort, box.address);
  t.regex(await b.cmd('s', 'SELECT Work'), /^\* 0 RECENT/m, 'another session does not');
  // New mail is recent in the one session that hears of it first.
  const from = b.text().length;
  await append(b, 'p3', 'Work');
  t.regex(b.text().slice(from), /^\* 3 EXISTS\r\n\* 1 RECENT/m, 'the appending session hears of it first');
  t.regex(await a.cmd('n2', 'NOOP'), /^\* 3 EXISTS\r\n\* 2 RECENT/m, 'not recent in the other one');
});

test('FLAGS lists the keywords in use; a new keyword is announced with FLAGS before the FETCH that shows it', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await login(t, imapPort, box.address);
  await append(a, 'p1', 'INBOX', '$Label1');
  const selected = await a.cmd('s', 'SELECT INBOX');
  t.regex(selected, /^\* FLAGS \(\\Answered \\Flagged \\Deleted \\Seen \\Draft \$Label1\)/m);
  t.regex(selected, /^\* OK \[PERMANENTFLAGS \(\\Answered \\Flagged \\Deleted \\Seen \\Draft \$Label1 \\\*\)\]/m);
  const stored = await a.cmd('k', 'STORE 1 +FLAGS ($Label2)');
  t.regex(stored, /^\* FLAGS \([^)]*\$Label2\)\r\n(\* OK \[PERMANENTFLAGS[^\r]*\r\n)\* 1 FETCH \(FLAGS \([^)]*\$Label2/m, 'FLAGS first');

  const b = await login(t, imapPort, box.address);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^\* FLAGS \([^)]*\$Label2\)/m);
  t.regex(await a.cmd('k2', 'STORE 1 +FLAGS (Project)'), /^k2 OK/m);
  const heard = await b.cmd('n', 'NOOP');
  t.regex(heard, /^\* FLAGS \([^)]*Project\)\r\n(\* OK \[PERMANENTFLAGS[^\r]*\r\n)\* 1 FETCH \(UID \d+ FLAGS \([^)]*Project/m, 'another session hears FLAGS first too');
});
