/**
 * Fuzz of the import parsers (issue 41): seeded mutations of a valid mbox and a valid Maildir tar
 * (flipped bytes, cuts, NUL and 8-bit runs, forged tar headers with wrong sizes, checksums and
 * path-escaping names) uploaded one after another. Every upload is answered 200 with a task or a
 * 4xx, never a 5xx; every task ends (completed or failed, never stuck); afterwards the server is
 * healthy and a good upload still imports exactly.
 */
import test from 'ava';
import { pack } from 'tar-stream';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { prng } from '../imap/fuzz-lines.js';

type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);

const MBOX = Buffer.from([
  'From alice@old.example Mon Jan  1 12:00:00 2024\nMessage-ID: <f1@old.example>\nSubject: one\nStatus: RO\n\n>From the start\n>>From quoted\n\n',
  'From bob@old.example Tue Feb 13 08:09:10 2024\nMessage-ID: <f2@old.example>\nX-Status: AF\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nhi\n--b--\n\n',
].join(''));

async function tarOf(files: Array<{ name: string; body: string; type?: 'file' | 'symlink' | 'directory'; linkname?: string }>): Promise<Buffer> {
  const p = pack();
  for (const f of files) p.entry({ name: f.name, type: f.type ?? 'file', linkname: f.linkname, mtime: new Date(Date.UTC(2023, 5, 1)) }, f.type === 'file' || !f.type ? f.body : undefined);
  p.finalize();
  const parts: Buffer[] = [];
  for await (const c of p as unknown as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts);
}

/** One seeded mutation of a valid upload. */
function mutate(r: Rand, base: Buffer): Buffer {
  const b = Buffer.from(base);
  switch (int(r, 7)) {
    case 0: // flipped bytes anywhere (tar headers, checksums, sizes, mbox separators)
      for (let i = 0, n = 1 + int(r, 40); i < n; i++) b[int(r, b.length)] = int(r, 256);
      return b;
    case 1: // cut short
      return b.subarray(0, int(r, b.length));
    case 2: // a run of NUL or 8-bit bytes spliced in
      return Buffer.concat([b.subarray(0, int(r, b.length)), Buffer.alloc(1 + int(r, 2000), r() < 0.5 ? 0 : 0xff), b.subarray(int(r, b.length))]);
    case 3: // digits written over a tar header's size field (offset 124, 12 octal digits)
      if (b.length >= 512) b.write(String(int(r, 8 ** 11)).padStart(11, '7').slice(0, 11), 124, 'latin1');
      return b;
    case 4: // the same bytes many times over, glued without separators
      return Buffer.concat(Array.from({ length: 2 + int(r, 20) }, () => b.subarray(0, int(r, b.length))));
    case 5: // CR-only line ends and a very long line
      return Buffer.concat([Buffer.from(b.toString('latin1').replace(/\n/g, '\r'), 'latin1'), Buffer.from(`\n${'x'.repeat(200_000)}\n`)]);
    default: // random bytes
      return Buffer.from(Array.from({ length: int(r, 4096) }, () => int(r, 256)));
  }
}

async function uploadAndSettle(t: { fail: (m: string) => void }, app: TestClient, key: string, address: string, type: string, body: Buffer) {
  const res = await app.request('POST', `/v1/mailboxes/${address}/import`, { key, raw: body, headers: { 'content-type': type } });
  if (res.status >= 500) t.fail(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  if (res.status !== 200) return res.status;
  const done = await app.pollTask('/v1/get/import', key, res.body.task_id, 60_000);
  if (done.status >= 500) t.fail(`poll answered ${done.status}`);
  if (!['completed', 'failed'].includes(done.body.status)) t.fail(`task ended as ${JSON.stringify(done.body)}`);
  return done.body.status as string;
}

test('seeded hostile mbox and Maildir tar uploads: no 5xx, every task ends, the server then imports a good upload exactly', async (t) => {
  t.timeout(180_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const r = prng(0x41a);
  const tar = await tarOf([
    { name: 'Maildir/dovecot-keywords', body: '0 $Important\n' },
    { name: 'Maildir/cur/1.M1P1.old:2,FS', body: 'Message-ID: <t1@old.example>\r\nSubject: a\r\n\r\nA\r\n' },
    { name: 'Maildir/.Sent/cur/2.M2P1.old:2,S', body: 'Message-ID: <t2@old.example>\r\nSubject: b\r\n\r\nB\r\n' },
  ]);
  // Forged names and entry kinds a tar reader must not follow out of the upload.
  const forged = await tarOf([
    { name: '../../../../tmp/escape:2,S', body: 'Subject: escape\r\n\r\nx\r\n' },
    { name: '/etc/cur/abs:2,S', body: 'Subject: absolute\r\n\r\nx\r\n' },
    { name: 'Maildir/cur/link:2,S', body: '', type: 'symlink', linkname: '/etc/passwd' },
    { name: 'Maildir/.../cur/dots:2,S', body: 'Subject: dots\r\n\r\nx\r\n' },
    { name: 'Maildir/cur', body: '', type: 'directory' },
  ]);

  const outcomes = new Map<string, number>();
  const deadline = Date.now() + 90_000;
  let sent = 0;
  for (; sent < 60 && Date.now() < deadline; sent++) {
    const asTar = sent % 2 === 1;
    const body = sent === 1 ? forged : mutate(r, asTar ? tar : MBOX);
    const outcome = String(await uploadAndSettle(t, app, box.key, box.address, asTar ? 'application/x-tar' : 'application/mbox', body));
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  t.true(sent >= 10, `only ${sent} uploads in the time allowed`);
  t.log(`${sent} uploads: ${JSON.stringify(Object.fromEntries(outcomes))}`);

  t.is((await app.request('GET', '/health')).status, 200);
  // A good upload into a fresh mailbox after the campaign: exactly its two messages.
  const fresh = await makeInbox(app);
  const good = await uploadAndSettle(t, app, fresh.key, fresh.address, 'application/mbox', MBOX);
  t.is(good, 'completed');
  const list = await app.get('/v1/emails?per_page=100', fresh.key);
  t.is(list.status, 200);
  t.is(list.body.data.length, 2);
});
