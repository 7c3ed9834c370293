import test from 'ava';
import type { TestClient } from '../helpers/app.js';
import type { Inbox } from '../helpers/emails.js';
import { submissionApp } from './world.js';
import { authed, cmd, prng, replies, stillSubmits, subjectListed, type Smtp } from './fuzz-wire.js';

/*
 * DATA under fuzz: bare CR and bare LF, lines far over 998 octets, dot-stuffing edge cases (lone
 * dots, dots before bare line ends, "\r\n.\n", ".." runs), 8-bit and invalid UTF-8 in headers and
 * body, no header/body separator, an empty message. Each message gets its one reply (250 or a
 * refusal, never a failed handler), every accepted one is stored, nothing queues behind them, and
 * a real client submits after. NUL is among the bytes: PostgreSQL's ingest once retried such a
 * message for ever, and everything acknowledged after it waited (issue 41).
 */

const BUDGET_MS = 25_000;

/** A body line (no CRLF of its own): ordinary, over limits, dotted, with bare CR/LF, 8-bit. */
function bodyLine(r: () => number): Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  switch (Math.floor(r() * 10)) {
    case 0: return Buffer.from(pick(['.', '..', '...', '. ', '.x', '..\r', '.\r', '\r.', '.\n.', '\n.\r', ' .', '.\t']), 'latin1');
    case 1: return Buffer.from(`line with a bare ${pick(['\r', '\n', '\r\r', '\n\n', '\n\r'])} inside`, 'latin1');
    case 2: return Buffer.from('x'.repeat(pick([998, 999, 1000, 4096, 65_536, 200_000])));
    case 3: return Buffer.from(Array.from({ length: 1 + Math.floor(r() * 80) }, () => Math.floor(r() * 256)).map((b) => (b === 10 || b === 13 ? 0x20 : b)));
    case 4: return Buffer.from(pick([[0], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0xff, 0xfe], [0x61, 0, 0x62]]));
    case 5: return Buffer.from(pick(['ü😀 mixed UTF-8 text', '=?utf-8?B?w7w=?= =?x-unknown?Q?a?=', '--boundary', '--boundary--', 'Content-Type: text/plain']), 'utf8');
    case 6: return Buffer.from('');
    default: return Buffer.from(`ordinary line ${Math.floor(r() * 1e6)}`);
  }
}

/** A whole DATA payload (terminated) for a message `subject` from `from`. */
function payload(r: () => number, from: string, subject: string): Buffer {
  const heads = [
    `From: <${from}>\r\nTo: <${from}>\r\nSubject: ${subject}\r\n\r\n`,
    `From: <${from}>\r\nSubject: ${subject}\r\nX-8bit: \xe9t\xe9\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`,
    `From: <${from}>\nSubject: ${subject}\n\n`,
    `From: <${from}>\rSubject: ${subject}\r\r`,
    `From: <${from}>\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="boundary"\r\n\r\n--boundary\r\n`,
    `From: <${from}>\r\nSubject: ${subject}\r\n`, // no separator: the body is all headers
    `From: <${from}>\r\nSubject: ${subject} ${'h'.repeat(5000)}\r\n\r\n`,
    `Subject: ${subject}\r\n\r\n`, // no From: refused
    `From: <${from}>\r\nSubject: ${subject} \0 with NUL\r\nX-Nul: a\0b\r\n\r\n`,
  ];
  const parts: Buffer[] = [Buffer.from(heads[Math.floor(r() * heads.length)]!, 'latin1')];
  for (let i = Math.floor(r() * 12); i > 0; i--) {
    const line = bodyLine(r);
    // Dot-stuffing as a client must (a leading dot doubled) most of the time, raw now and then.
    const stuffed = line[0] === 0x2e && r() < 0.8 ? Buffer.concat([Buffer.from('.'), line]) : line;
    parts.push(stuffed, Buffer.from(r() < 0.9 ? '\r\n' : r() < 0.5 ? '\n' : '\r'));
  }
  // A raw lone dot would end the message early (the rest read as commands): those are stuffed.
  let text = Buffer.concat(parts).toString('latin1');
  while (text.includes('\r\n.\r\n')) text = text.replace('\r\n.\r\n', '\r\n..\r\n');
  return Buffer.from(`${text}\r\n.\r\n`, 'latin1');
}

/** The Message-IDs of every email of the mailbox (the list does not show them: each email is read). */
async function messageIds(app: TestClient, box: Inbox): Promise<Set<string>> {
  const out = new Set<string>();
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const r = await app.get(`/v1/emails?per_page=100&mailbox_id=${box.mailboxId}${cursor ? `&cursor=${cursor}` : ''}`, box.key);
    for (const e of r.body.data) out.add((await app.get(`/v1/emails/${e.id}`, box.key)).body.data.message_id);
    cursor = r.body.meta.next_cursor;
    if (!cursor) break;
  }
  return out;
}

test('DATA with bare CR and LF, overlong lines, dot-stuffing edge cases, 8-bit bytes and NUL: one reply each, accepted mail stored, none queued behind', async (t) => {
  t.timeout(150_000);
  const { app, box } = await submissionApp(t);
  const r = prng(61);
  let c: Smtp = await authed(app, box);
  const deadline = Date.now() + BUDGET_MS;
  const stats = { messages: 0, accepted: 0, refused: 0, closed: 0 };
  const accepted: string[] = [];
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    const subject = `fuzz data ${i}`;
    const pipelined = r() < 0.5;
    const start = Buffer.from(`MAIL FROM:<${box.address}> BODY=8BITMIME${r() < 0.5 ? ' SMTPUTF8' : ''}\r\nRCPT TO:<${box.address}>\r\nDATA\r\n`);
    const body = payload(r, box.address, subject);
    let got: string[];
    if (pipelined) {
      c.socket.write(Buffer.concat([start, body]));
      got = await replies(c, 4, 60_000);
    } else {
      c.socket.write(start);
      got = await replies(c, 3);
      if (got[2]?.startsWith('354')) { c.socket.write(body); got.push(...(await replies(c, 1, 60_000))); }
    }
    stats.messages++;
    const last = got[got.length - 1] ?? '';
    const queued = /^250 .*queued as (\S+)/.exec(last);
    if (queued) { stats.accepted++; accepted.push(queued[1]!); } else stats.refused++;
    if (c.closed || c.farewell) { stats.closed++; c.socket.destroy(); c = await authed(app, box); continue; }
    // The session is in a clean state for the next message.
    t.regex((await cmd(c, 'RSET')) ?? '', /^250/, `RSET after ${subject}`);
  }
  c.socket.destroy();
  t.log(stats);
  t.true(stats.messages >= 10 && stats.accepted > 0);

  // A message whose lone dots and dotted lines were stuffed arrives unstuffed, byte for byte.
  const d = await authed(app, box);
  d.socket.write(`MAIL FROM:<${box.address}>\r\nRCPT TO:<${box.address}>\r\nDATA\r\n`);
  t.regex((await replies(d, 3))[2]!, /^354/);
  d.socket.write(`From: <${box.address}>\r\nSubject: dots\r\n\r\n..\r\n...x\r\n.\n.\r\nend\r\n.\r\n`);
  t.regex((await replies(d, 1))[0]!, /^250 .*queued/);
  d.socket.destroy();
  t.true(await subjectListed(app, box, 'dots'), 'the dotted message is stored');
  const listed = await app.get(`/v1/emails?per_page=100&mailbox_id=${box.mailboxId}&q=dots`, box.key);
  const dots = listed.body.data.find((e: any) => e.subject === 'dots' && e.folder === 'INBOX') ?? listed.body.data.find((e: any) => e.subject === 'dots');
  const full = await app.get(`/v1/emails/${dots.id}`, box.key);
  t.true(String(full.body.data.body_text).replace(/\r\n/g, '\n').startsWith('.\n..x\n'), `unstuffed: ${JSON.stringify(full.body.data.body_text)}`);

  // Every accepted message of the campaign is stored (none stuck, none holding the others back), and mail after them too.
  await stillSubmits(t, app, box, 'after data');
  const stored = await messageIds(app, box);
  t.deepEqual(accepted.filter((x) => !stored.has(x)), [], 'every accepted message is stored (by the Message-ID its 250 named)');
});
