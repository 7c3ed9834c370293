import test from 'ava';
import { Readable } from 'node:stream';
import { extract, pack } from 'tar-stream';
import type { ImapFlow } from 'imapflow';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { imapClient, PASSWORD } from '../helpers/imap.js';

/** An mboxrd entry as the export writes it, so that an export of the import is the same file. */
function entry(date: string, raw: string): string {
  const escaped = raw.replace(/^(>*From )/gm, '>$1');
  return `From MAILER-DAEMON ${date}\n${escaped}\n`;
}

/** Messages whose bodies hold the lines mbox must escape. */
const MESSAGES = [
  ['Mon Jan  1 12:00:00 2024', 'Message-ID: <one@old.example>\r\nSubject: one\r\nStatus: RO\r\n\r\nFrom the start\r\n>From once quoted\r\n>>From twice\r\nend\r\n'],
  ['Tue Feb 13 08:09:10 2024', 'Message-ID: <two@old.example>\nSubject: two (LF line ends)\n\nFrom here\nFromage is not escaped\n\nFrom after an empty line\n'],
  ['Wed Mar  6 23:59:59 2024', 'Subject: three, no Message-ID\r\nX-Status: AF\r\n\r\nbody\r\n'],
] as const;

async function upload(app: TestClient, key: string, address: string, type: string, body: Buffer, query = '') {
  const r = await app.request('POST', `/v1/mailboxes/${address}/import${query}`, { key, raw: body, headers: { 'content-type': type } });
  if (r.status !== 200) return r;
  return app.pollTask('/v1/get/import', key, r.body.task_id, 60_000);
}

async function exported(app: TestClient, key: string, address: string, query: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(`${app.base}/v1/mailboxes/${address}/export?${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

async function folderState(client: ImapFlow, folder: string) {
  const lock = await client.getMailboxLock(folder);
  try {
    if (!client.mailbox || client.mailbox.exists === 0) return [];
    const out: Array<{ source: string; flags: string[]; date: number }> = [];
    for await (const m of client.fetch('1:*', { source: true, flags: true, internalDate: true })) {
      out.push({ source: m.source!.toString('latin1'), flags: [...m.flags!].filter((f) => f !== '\\Recent').sort(), date: new Date(m.internalDate!).getTime() });
    }
    return out;
  } finally {
    lock.release();
  }
}

test('an mbox upload unescapes From lines, reads Status flags and dates; its export is the same file; a second upload skips all', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const mbox = Buffer.from(MESSAGES.map(([d, raw]) => entry(d, raw)).join(''));
  const done = await upload(app, box.key, box.address, 'application/mbox', mbox, '?folder=Old/Letters');
  t.is(done.body.status, 'completed', JSON.stringify(done.body));
  t.like(done.body.results, { status: 'completed', folders: 1, messages_total: 3, messages_imported: 3, messages_skipped: 0 });

  const client = await imapClient(t, app.imapPort, box.address, PASSWORD);
  const stored = await folderState(client, 'Old/Letters');
  t.deepEqual(stored.map((m) => m.source), MESSAGES.map(([, raw]) => raw), 'the bytes as they were before escaping');
  t.deepEqual(stored.map((m) => m.flags), [['\\Seen'], [], ['\\Answered', '\\Flagged']]);
  t.deepEqual(stored.map((m) => m.date), [Date.UTC(2024, 0, 1, 12), Date.UTC(2024, 1, 13, 8, 9, 10), Date.UTC(2024, 2, 6, 23, 59, 59)]);

  const out = await exported(app, box.key, box.address, 'format=mbox&folder=Old/Letters');
  t.is(out.status, 200);
  t.is(out.type, 'application/mbox');
  t.is(out.body.toString('latin1'), mbox.toString('latin1'), 'export of the import is the uploaded file, byte for byte');

  const again = await upload(app, box.key, box.address, 'application/mbox', mbox, '?folder=Old/Letters');
  t.like(again.body.results, { status: 'completed', messages_imported: 0, messages_skipped: 3 });
  t.is((await exported(app, box.key, box.address, 'format=mbox&folder=Nowhere')).status, 404);
});

test('uploads larger than the JSON limit stream through; other media types are 415; an empty or broken mbox fails', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const n = 40;
  const big = Buffer.from(Array.from({ length: n }, (_, i) => entry('Thu Jan  4 00:00:00 2024', `Message-ID: <big${i}@old.example>\r\n\r\n${'y'.repeat(100_000)}\r\n`)).join(''));
  t.true(big.length > 2 * 1024 * 1024);
  const done = await upload(app, box.key, box.address, 'application/mbox', big);
  t.like(done.body.results, { status: 'completed', messages_imported: n });
  t.is((await upload(app, box.key, box.address, 'text/plain', big)).status, 415);
  const broken = await upload(app, box.key, box.address, 'application/mbox', Buffer.from('Subject: not an mbox\r\n\r\nbody\r\n'));
  t.is(broken.body.status, 'failed');
  t.regex(broken.body.results.error, /Not an mbox file/);
  const other = await makeInbox(app);
  t.is((await upload(app, other.key, box.address, 'application/mbox', big)).status, 404);
});

/** A tar built with tar-stream (as other tools write them), with a leading Maildir/ directory. */
async function tarOf(files: Array<{ name: string; body: string; mtime: Date }>): Promise<Buffer> {
  const p = pack();
  for (const f of files) p.entry({ name: f.name, mtime: f.mtime }, f.body);
  p.finalize();
  const parts: Buffer[] = [];
  for await (const c of p as unknown as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts);
}

test('a Maildir++ tar upload: folders from .Names, flags and keywords from file names, dates from mtimes; its export imports to the same state', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const at = (d: number) => new Date(Date.UTC(2023, 5, d, 10, 0, 0));
  const tar = await tarOf([
    { name: 'Maildir/dovecot-keywords', body: '0 $Important\n1 Project\n', mtime: at(1) },
    { name: 'Maildir/cur/1685000000.M1P1.old:2,FS', body: 'Message-ID: <a@old.example>\r\nSubject: a\r\n\r\nA\r\n', mtime: at(1) },
    { name: 'Maildir/cur/1685000001.M2P1.old:2,RSab', body: 'Message-ID: <b@old.example>\r\nSubject: b\r\n\r\nB\r\n', mtime: at(2) },
    { name: 'Maildir/new/1685000002.M3P1.old', body: 'Message-ID: <c@old.example>\r\nSubject: c\r\n\r\nC\r\n', mtime: at(3) },
    { name: 'Maildir/.Sent/cur/1685000003.M4P1.old:2,S', body: 'Message-ID: <d@old.example>\r\nSubject: d\r\n\r\nD\r\n', mtime: at(4) },
    { name: 'Maildir/.Work.Projects/cur/1685000004.M5P1.old:2,DT', body: 'Message-ID: <e@old.example>\r\nSubject: e\r\n\r\nE\r\n', mtime: at(5) },
    { name: 'Maildir/dovecot-uidlist', body: '3 V1 N6\n', mtime: at(5) },
  ]);
  const done = await upload(app, box.key, box.address, 'application/x-tar', tar);
  t.is(done.body.status, 'completed', JSON.stringify(done.body));
  t.like(done.body.results, { folders: 3, messages_imported: 5 });

  const client = await imapClient(t, app.imapPort, box.address, PASSWORD);
  const inbox = await folderState(client, 'INBOX');
  t.deepEqual(inbox.map((m) => m.flags), [['\\Flagged', '\\Seen'], ['$Important', 'Project', '\\Answered', '\\Seen'], []]);
  t.deepEqual(inbox.map((m) => m.date), [at(1), at(2), at(3)].map((d) => d.getTime()));
  t.deepEqual((await folderState(client, 'Sent')).map((m) => m.flags), [['\\Seen']]);
  t.deepEqual((await folderState(client, 'Work/Projects')).map((m) => m.flags), [['\\Deleted', '\\Draft']]);

  // The export: a Maildir++ tree with flags in names, read back by a tar reader.
  const out = await exported(app, box.key, box.address, 'format=maildir');
  t.is(out.status, 200);
  t.is(out.type, 'application/x-tar');
  const names: string[] = [];
  const ex = extract();
  Readable.from([out.body]).pipe(ex);
  for await (const e of ex) { names.push(e.header.name); for await (const _ of e) { /* drained */ } }
  t.true(names.some((n) => /^cur\/\d+\.M\d+\..*:2,FS$/.test(n)), names.join(' '));
  t.true(names.some((n) => /^cur\/.*:2,RSab$/.test(n)), 'keywords as the letters of dovecot-keywords');
  t.true(names.includes('.Work.Projects/cur/') && names.some((n) => /^\.Work\.Projects\/cur\/.*:2,DT$/.test(n)));
  t.true(names.includes('dovecot-keywords'));

  // Into another mailbox: the same folders, bytes, flags and dates.
  const other = await makeInbox(app);
  const back = await upload(app, other.key, other.address, 'application/x-tar', out.body);
  t.like(back.body.results, { status: 'completed', messages_imported: 5 });
  const client2 = await imapClient(t, app.imapPort, other.address, PASSWORD);
  for (const f of ['INBOX', 'Sent', 'Work/Projects']) t.deepEqual(await folderState(client2, f), await folderState(client, f), f);
});
