import test from 'ava';
import { featureIds, type TokenSource } from '../../src/spam/tokens.js';
import { startTestApp } from '../helpers/app.js';
import { inboundBody, listAll, postInbound } from '../helpers/emails.js';
import { provision, rawSession } from '../helpers/smtp.js';

/** A small seeded generator (LCG), so a failing case can be replayed from its seed. */
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s; };
  return { int: (n: number) => next() % n, pick: <T>(xs: T[]): T => xs[next() % xs.length] };
}

/** Pieces of hostile text: NUL, lone surrogates, combining marks, RTL overrides, huge words, link soup. */
const PIECES = [
  '\u0000', '\ud800', '\udfff', 'e\u0301\u0301\u0301', '\u202e', '\ufeff', '€$£%!', 'http://', 'https://a.',
  'https://x.example/' + 'a'.repeat(300), '<a href="http://evil.example">', '&#0;&#x110000;', 'ä'.repeat(50),
  '-'.repeat(2000), 'word ', ' ', '\r\n', '\t', '🙂', 'a'.repeat(70_000),
];

function hostileText(r: ReturnType<typeof rng>, parts: number): string {
  let s = '';
  for (let i = 0; i < parts; i++) s += r.int(4) === 0 ? String.fromCharCode(r.int(0x10000)) : r.pick(PIECES);
  return s;
}

function hostileSource(seed: number): TokenSource {
  const r = rng(seed);
  const headers: Record<string, string | string[]> = {};
  const names = ['from', 'reply-to', 'x-mailer', 'user-agent', 'content-type', 'list-id', 'message-id', 'references'];
  for (const name of names) if (r.int(2)) headers[name] = r.int(3) === 0 ? [hostileText(r, 3), hostileText(r, 3)] : hostileText(r, 5);
  return {
    subject: hostileText(r, 1 + r.int(20)),
    fromEmail: r.int(2) ? `${hostileText(r, 2)}@${hostileText(r, 2)}` : hostileText(r, 3),
    headers,
    bodyText: r.int(4) === 0 ? null : hostileText(r, 1 + r.int(400)),
    bodyHtml: r.int(2) ? null : `<html>${hostileText(r, 1 + r.int(200))}</html>`,
  };
}

test('the spam tokeniser: 300 seeded hostile messages give bounded, distinct, exact 53-bit feature ids and never throw', (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    const ids = featureIds(hostileSource(seed));
    t.true(ids.length <= 4000, `seed ${seed}: ${ids.length} features`);
    t.is(new Set(ids).size, ids.length, `seed ${seed}: distinct`);
    t.true(ids.every((id) => Number.isSafeInteger(id) && id >= 0), `seed ${seed}: safe integers`);
    t.deepEqual(featureIds(hostileSource(seed)), ids, `seed ${seed}: stable`);
  }
  // The degenerate sources: nothing at all, and headers of the wrong shape.
  t.deepEqual(featureIds({ subject: '', fromEmail: '', headers: {}, bodyText: null, bodyHtml: null }), []);
  t.notThrows(() => featureIds({ subject: '', fromEmail: '@', headers: { from: [], 'content-type': [] }, bodyText: '', bodyHtml: '' }));
});

const bin = (s: string) => Buffer.from(s, 'latin1');

/** Waits until INBOX and Junk together hold `count` emails whose subject matches; returns them. */
async function waitInEitherFolder(app: Awaited<ReturnType<typeof startTestApp>>, key: string, subject: RegExp, count: number): Promise<any[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = [...await listAll(app, key, 'folder=INBOX'), ...await listAll(app, key, 'folder=Junk')].filter((e) => subject.test(e.subject));
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`${found.length} of ${count} stored`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Messages built to stress the tokeniser on the delivery path: each ends with CRLF, no line starts with a dot. */
function hostileMessages(): Buffer[] {
  const head = (n: number, extra = '') => `From: "Fuzz ${n}" <fuzz${n}@sender.example>\r\nTo: box@fuzz.test\r\nSubject: fuzz ${n}\r\nMessage-ID: <fuzz-${n}@sender.example>\r\n${extra}`;
  const links = Array.from({ length: 5000 }, (_, i) => `http://h${i}.spam${i % 7}.example/x`).join(' ');
  return [
    bin(`${head(1)}\r\n${'x'.repeat(900)}\r\n`.repeat(1) + `${'y'.repeat(998)}\r\n`.repeat(1000)),
    bin(`${head(2)}\r\n${links.replace(/(.{900})/g, '$1\r\n')}\r\n`),
    bin(`${head(3, 'Content-Type: text/html; charset=utf-8\r\n')}\r\n${'<div>'.repeat(5000)}<a href="http://deep.example">x</a>${'</div>'.repeat(5000)}\r\n`.replace(/(.{900})/g, '$1\r\n')),
    bin(`${head(4, 'Content-Type: text/plain; charset=x-unknown-charset\r\nX-Mailer: \x00\xff\xfe mailer\r\n')}\r\n\x00\xc3\x28\xe2\x82\xff \xed\xa0\x80 ${'\xf0\x9f\x99'.repeat(200)}\r\n`),
    bin(`${head(5, 'Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n')}\r\n${'!!!!not base64 at all====\r\n'.repeat(500)}`),
    bin(`${head(6, 'Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n')}\r\n${'=ZZ=\r\n=\r\n=3'.repeat(300)}\r\n`),
    bin(`${head(7, `${'Received: from x by y; Thu, 1 Jan 1970 00:00:00 +0000\r\n'.repeat(500)}Reply-To: <@@@>\r\nList-Id: ${'\x00'.repeat(10)}\r\n`)}\r\nbody\r\n`),
    bin(`${head(8, 'Content-Type: multipart/alternative; boundary="b"\r\n')}\r\n--b\r\nContent-Type: text/html\r\n\r\n<a href=https://${'a.'.repeat(120)}example>\r\n--b\r\nContent-Type: text/plain; charset=utf-16\r\n\r\n\xff\xfe\x00\x00\r\n--b--\r\n`),
  ];
}

test('hostile messages delivered over SMTP into a trained mailbox each get a verdict, and ordinary mail after them is filed', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'fuzz.test', ['box']);
  // Train the mailbox's model (10 messages a class) through the junk and not-junk endpoints, so
  // hostile mail meets a model with lookups to make, not the untrained rules alone.
  for (let i = 0; i < 20; i++) {
    const r = await postInbound(app, key, inboundBody('box@fuzz.test', { subject: `training ${i}`, message_id: `<train-${i}@fuzz.test>`, body_text: i < 10 ? `cheap pills offer winner ${i}` : `meeting notes for the project ${i}` }));
    t.is(r.status, 200, JSON.stringify(r.body));
  }
  const trained = await waitInEitherFolder(app, key, /^training \d+$/, 20);
  for (const e of trained) {
    const spam = /^training [0-9]$/.test(e.subject);
    const r = await app.post(`/v1/emails/${e.id}/${spam ? 'junk' : 'not-junk'}`, key, {});
    t.true(r.status === 200 || r.status === 202, `${e.subject}: ${r.status} ${JSON.stringify(r.body)}`);
  }

  for (const bytes of hostileMessages()) {
    const s = await rawSession(app.smtpPort, 30_000);
    try {
      await s.command('EHLO fuzz.example');
      await s.command('MAIL FROM:<fuzz@sender.example>');
      await s.command('RCPT TO:<box@fuzz.test>');
      t.regex(await s.command('DATA'), /^354/);
      s.write(Buffer.concat([bytes, bin('.\r\n')]));
      t.regex(await s.reply(), /^250 /);
    } finally {
      s.close();
    }
  }
  const ordinary = bin('From: plain@sender.example\r\nTo: box@fuzz.test\r\nSubject: ordinary after fuzz\r\nMessage-ID: <ordinary-fuzz@sender.example>\r\n\r\nMeeting notes.\r\n');
  const s = await rawSession(app.smtpPort, 30_000);
  await s.command('EHLO fuzz.example');
  await s.command('MAIL FROM:<plain@sender.example>');
  await s.command('RCPT TO:<box@fuzz.test>');
  await s.command('DATA');
  s.write(Buffer.concat([ordinary, bin('.\r\n')]));
  t.regex(await s.reply(), /^250 /);
  s.close();

  // All nine stored, whichever folder the verdict chose, each with a verdict and reasons.
  const hostile = await waitInEitherFolder(app, key, /^(fuzz \d|ordinary after fuzz)$/, 9);
  t.is(hostile.length, 9);
  let modelled = 0;
  for (const e of hostile) {
    const full = await app.get(`/v1/emails/${e.id}`, key);
    t.is(full.status, 200);
    t.true(['ham', 'junk'].includes(full.body.data.spam?.verdict), `${e.subject}: ${JSON.stringify(full.body.data.spam)}`);
    t.true(Array.isArray(full.body.data.spam.reasons));
    if (full.body.data.spam.reasons.some((r: any) => r.rule.startsWith('BAYES'))) modelled++;
  }
  t.true(modelled > 0, 'the trained model took part');
  const health = await app.get('/health');
  t.is(health.status, 200);
});
