import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import nodemailer from 'nodemailer';
import { simpleParser } from 'mailparser';
import { createBlobStore } from '../../src/ingest/blobs.js';
import type { SpooledBlob } from '../../src/inbound/types.js';
import { readMail, SPOOL_ATTACHMENT_BYTES } from '../../src/ingest/parse/mail-reader.js';
import { startTestApp } from '../helpers/app.js';
import { makeInbox, waitForEmails } from '../helpers/emails.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A message with one large and one small attachment, as nodemailer composes it. */
async function compose(big: Buffer, small: Buffer): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({
    from: 'Sender <sender@remote.example>', to: 'someone@somewhere.example', subject: 'Large one', text: 'See attached.', messageId: '<large@remote.example>',
    attachments: [{ filename: 'big.bin', content: big }, { filename: 'small.txt', content: small, contentType: 'text/plain' }],
  });
  return info.message as Buffer;
}

test('readMail spools an attachment past the threshold to a file with its hash, keeps small ones in memory, and reads as simpleParser does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstead-reader-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const blobs = createBlobStore(dir);
  const big = randomBytes(SPOOL_ATTACHMENT_BYTES * 2 + 123);
  const small = Buffer.from('small text attachment\n');
  const raw = await compose(big, small);
  const options = { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true };
  const mail = await readMail(raw, options, blobs.spoolBlob);
  const reference = await simpleParser(raw, options);
  t.is(mail.subject, reference.subject);
  t.is(mail.text, reference.text);
  t.is(mail.html, reference.html);
  t.deepEqual(mail.attachments.map((a) => a.filename), reference.attachments.map((a) => a.filename));
  const spooled = mail.attachments[0].content as SpooledBlob;
  t.false(Buffer.isBuffer(spooled));
  t.is(spooled.size, big.length);
  t.is(spooled.sha256, sha(big));
  t.true(readFileSync(spooled.spooled).equals(big));
  t.true(Buffer.isBuffer(mail.attachments[1].content));
  t.true((mail.attachments[1].content as Buffer).equals(small));
  // Stored as a blob: the spooled file is moved into place, nothing is left under tmp/.
  t.is(await blobs.putBlob(spooled), sha(big));
  t.true((await blobs.readBlob(sha(big))).equals(big));
  t.deepEqual(readdirSync(blobs.dirs.tmp), []);
  // The same content spooled again: already stored, so the new file goes.
  const again = await readMail(raw, options, blobs.spoolBlob);
  t.is(await blobs.putBlob(again.attachments[0].content as SpooledBlob), sha(big));
  t.deepEqual(readdirSync(blobs.dirs.tmp), []);
  // Without a spool everything stays in memory.
  t.true((await readMail(raw, options)).attachments[0].content instanceof Buffer);
});

test('a large attachment over SMTP is stored and downloads byte for byte, with nothing left under tmp/', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const big = randomBytes(3 * 1024 * 1024 + 7);
  const small = Buffer.from('small text attachment\n');
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, secure: false, ignoreTLS: true, name: 'client.example' });
  t.teardown(() => transport.close());
  const sent = await transport.sendMail({ envelope: { from: 'sender@remote.example', to: [box.address] }, raw: await compose(big, small) });
  t.regex(sent.response, /^250/);
  const [item] = await waitForEmails(app, box.key, 1, '', 45_000);
  const email = (await app.get(`/v1/emails/${item.id}`, box.key)).body.data;
  t.deepEqual(email.attachments.map((a: any) => [a.filename, a.size]), [['big.bin', big.length], ['small.txt', small.length]]);
  for (const [i, content] of [[0, big], [1, small]] as const) {
    const link = (await app.get(`/v1/emails/${email.id}/attachments/${email.attachments[i].id}`, box.key)).body.data.url as string;
    const res = await fetch(app.base + new URL(link).pathname.replace(/^\/api/, ''));
    t.is(res.status, 200);
    t.is(sha(Buffer.from(await res.arrayBuffer())), sha(content));
  }
  t.deepEqual(readdirSync(join(app.dataDir, 'tmp')).filter((n) => n.endsWith('.blob')), []);
});
