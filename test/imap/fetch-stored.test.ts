import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { listOf } from '../../src/db/json-list.js';
import { imapSummary, type ImapSummary } from '../../src/message/summary.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { FIXTURE_SENDER, loadFixtures, sendMail } from '../helpers/smtp.js';

/*
 * The kept IMAP summary (RFC822.SIZE, ENVELOPE, BODYSTRUCTURE; table email_imap) is exactly what
 * the message's bytes give, on every path that makes a message, and a header sync answers from it.
 */

/** The kept summary of an email, or null (no row, or NULLs). */
async function kept(app: TestClient, emailId: number): Promise<ImapSummary | null> {
  const r = await app.app.db.selectFrom('email_imap').selectAll().where('email_id', '=', emailId).executeTakeFirst();
  if (!r || r.size === null || r.envelope === null || r.bodystructure === null) return null;
  return { size: r.size, envelope: r.envelope, bodystructure: r.bodystructure };
}

const rawOf = (app: TestClient, key: string, id: number) =>
  fetch(`${app.base}/v1/emails/${id}/raw`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => Buffer.from(await r.arrayBuffer()));

/** The live emails of a mailbox (any folder) with their folder and UID. */
const rowsOf = (app: TestClient, mailboxId: number) =>
  app.app.db.selectFrom('emails').select(['id', 'folder', 'uid']).where('mailbox_id', '=', mailboxId).where('deleted_at', 'is', null).orderBy('id').execute();

/** The FETCH line a header sync must give for a message (as rawImap reads it: bytes as latin1). */
const line = (seq: number, uid: number, s: ImapSummary) =>
  Buffer.from(`* ${seq} FETCH (UID ${uid} RFC822.SIZE ${s.size} ENVELOPE ${s.envelope} BODYSTRUCTURE ${s.bodystructure})\r\n`, 'utf8').toString('latin1');

/** A header sync of a folder over a raw connection; answers its text. */
async function headerSync(c: RawImap, folder: string, tag: string): Promise<string> {
  await c.cmd(`${tag}s`, `SELECT ${folder}`);
  const text = await c.cmd(`${tag}f`, 'UID FETCH 1:* (UID RFC822.SIZE ENVELOPE BODYSTRUCTURE)', 60_000);
  return text;
}

/** Asserts that every email of the folder has its kept summary equal to its bytes', and that the sync shows it. */
async function checkFolder(t: ExecutionContext, app: TestClient, key: string, mailboxId: number, folder: string, sync: string) {
  const rows = (await rowsOf(app, mailboxId)).filter((r) => r.folder === folder).sort((a, b) => a.uid - b.uid);
  t.true(rows.length > 0);
  for (const [i, r] of rows.entries()) {
    const expected = imapSummary(await rawOf(app, key, r.id));
    t.deepEqual(await kept(app, r.id), expected, `email ${r.id}: the kept summary is what its bytes give`);
    t.true(sync.includes(line(i + 1, r.uid, expected)), `email ${r.id}: the header sync answers the summary`);
  }
  return rows;
}

test('SMTP mail: the parser thread keeps each message summary, equal to what its bytes give, and a header sync answers it', async (t) => {
  // One parser thread: the summary is made where the built server parses.
  const app = await startTestApp(t, { parserThreads: 1 });
  const box = await makeInbox(app);
  const fixtures = loadFixtures();
  for (const f of fixtures) {
    await sendMail(app.smtpPort, { from: f.spec.mail_from ?? FIXTURE_SENDER, to: [box.address] }, f.raw);
  }
  await waitForEmails(app, box.key, fixtures.length, '', 120_000);
  // Kept at delivery: every one has its row before any FETCH.
  for (const r of await rowsOf(app, box.mailboxId)) t.not(await kept(app, r.id), null, `email ${r.id} kept its summary when stored`);
  const c = await rawImap(t, app.imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const sync = await headerSync(c, 'INBOX', 'b');
  t.is(sync.match(/^\* \d+ FETCH /gm)?.length, fixtures.length);
  await checkFolder(t, app, box.key, box.mailboxId, 'INBOX', sync);
});

test('API mail: the summary is kept when its rendering is, by GET /raw or by a first FETCH', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'Rendered by raw', body_text: 'plain', body_html: '<b>html</b>' });
  await deliver(app, box.key, box.address, { subject: 'Rendered by FETCH ünïcode', body_text: 'plain only', cc: ['c1@x.example', 'c2@x.example'] });
  const items = await waitForEmails(app, box.key, 2);
  for (const it of items) t.is(await kept(app, it.id), null, 'API mail has no bytes (so no summary) until rendered');
  const byRaw = items.find((i) => i.subject === 'Rendered by raw');
  const raw = await rawOf(app, box.key, byRaw.id);
  t.deepEqual(await kept(app, byRaw.id), imapSummary(raw), 'kept with the rendering GET /raw made');
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const sync = await headerSync(c, 'INBOX', 'b');
  await checkFolder(t, app, box.key, box.mailboxId, 'INBOX', sync);
});

test('APPEND keeps the summary of the bytes given; COPY copies it, MOVE keeps it', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const appended = [
    'From: "Zoë Writer" <zoe@client.example>',
    'To: undisclosed-recipients:;',
    'Subject: =?UTF-8?B?RHJhZnQg4pyT?=',
    'Message-ID: <append-stored@client.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    'Grüße',
    '--b1',
    'Content-Type: image/png; name="p.png"',
    'Content-Disposition: inline; filename="p.png"',
    'Content-ID: <p1>',
    'Content-Transfer-Encoding: base64',
    '',
    'iVBORw0KGgo=',
    '--b1--',
    '',
  ].join('\r\n');
  const bytes = Buffer.from(appended, 'utf8');
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  c.send(`b APPEND Drafts (\\Draft) {${bytes.length}+}\r\n`);
  c.send(Buffer.concat([bytes, Buffer.from('\r\n')]));
  await c.until(/^b OK/);
  const [draft] = (await rowsOf(app, box.mailboxId)).filter((r) => r.folder === 'Drafts');
  t.deepEqual(await kept(app, draft.id), imapSummary(bytes), 'APPEND kept the summary of its bytes');
  await c.cmd('c', 'SELECT Drafts');
  t.regex(await c.cmd('d', 'UID COPY 1 Junk'), /^d OK/m);
  t.regex(await c.cmd('e', 'UID MOVE 1 Trash'), /^e OK/m);
  const rows = await rowsOf(app, box.mailboxId);
  const copy = rows.find((r) => r.folder === 'Junk')!;
  const moved = rows.find((r) => r.folder === 'Trash')!;
  t.is(moved.id, draft.id, 'MOVE keeps the message (and its row)');
  t.deepEqual(await kept(app, copy.id), imapSummary(bytes), 'COPY copied the summary');
  await checkFolder(t, app, box.key, box.mailboxId, 'Junk', await headerSync(c, 'Junk', 'f'));
  await checkFolder(t, app, box.key, box.mailboxId, 'Trash', await headerSync(c, 'Trash', 'g'));
});

test('mail stored without a summary (older rows) gets it at its first FETCH, written back; BODY[] and BODY are unchanged', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (const f of loadFixtures().slice(0, 6)) await sendMail(app.smtpPort, { from: FIXTURE_SENDER, to: [box.address] }, f.raw);
  await waitForEmails(app, box.key, 6, '', 60_000);
  const rows = await rowsOf(app, box.mailboxId);
  // As a database from before summaries were kept: NULL columns for some, no row for others.
  await sql`UPDATE email_imap SET size = NULL, envelope = NULL, bodystructure = NULL WHERE email_id IN (${rows[0].id}, ${rows[1].id}, ${rows[2].id})`.execute(app.app.db);
  await sql`DELETE FROM email_imap WHERE email_id IN (${rows[3].id}, ${rows[4].id})`.execute(app.app.db);
  for (const r of rows.slice(0, 5)) t.is(await kept(app, r.id), null);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const sync = await headerSync(c, 'INBOX', 'b');
  await checkFolder(t, app, box.key, box.mailboxId, 'INBOX', sync);
  // Other items still read the bytes, as before.
  const raw = await rawOf(app, box.key, rows[0].id);
  const body = await c.cmd('c', `UID FETCH ${rows[0].uid} (BODY.PEEK[] BODY)`);
  t.true(body.includes(`BODY[] {${raw.length}}\r\n${raw.toString('latin1')} BODY (`), 'BODY[] is the bytes');
});

test('a header sync of 1,100 messages answers each once, in order, in chunks (summaries kept and computed mixed)', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  const N = 1100;
  const bodies: Buffer[] = [];
  for (let i = 0; i < N; i++) {
    const m = Buffer.from(`From: s${i}@client.example\r\nTo: ${box.address}\r\nSubject: bulk ${i}\r\nMessage-ID: <bulk-${i}@client.example>\r\n\r\nbody ${i}\r\n`);
    bodies.push(m);
    // LITERAL+: the whole run pipelined, answered in order.
    c.send(Buffer.concat([Buffer.from(`p${i} APPEND INBOX {${m.length}+}\r\n`), m, Buffer.from('\r\n')]));
  }
  await c.until(new RegExp(`^p${N - 1} OK`), 120_000);
  const ids = (await rowsOf(app, box.mailboxId)).map((r) => r.id);
  t.is(ids.length, N);
  // Every third without a summary, so chunks mix kept and computed ones.
  await sql`DELETE FROM email_imap WHERE email_id IN ${listOf(app.app.db, ids.filter((_, i) => i % 3 === 0))}`.execute(app.app.db);
  const sync = await headerSync(c, 'INBOX', 'b');
  const seqs = [...sync.matchAll(/^\* (\d+) FETCH \(UID (\d+) RFC822\.SIZE (\d+) ENVELOPE \("?[^"]*"? "bulk (\d+)"/gm)];
  t.is(seqs.length, N);
  t.true(seqs.every((m, i) => Number(m[1]) === i + 1 && Number(m[2]) === i + 1 && Number(m[4]) === i && Number(m[3]) === bodies[i].length));
  const left = await sql<{ n: number }>`SELECT count(*) AS n FROM email_imap WHERE envelope IS NOT NULL AND email_id IN ${listOf(app.app.db, ids)}`.execute(app.app.db);
  t.is(Number(left.rows[0].n), N, 'the computed summaries were written back');
});
