import test from 'ava';
import { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import { ReturnPathFilter, withoutReturnPath } from '../../src/smtp/return-path.js';
import { startTestApp } from '../helpers/app.js';
import { provision, sendMail, waitForEmails } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld } from '../outbound/world.js';

const FORGED = 'Return-Path: <forged@elsewhere.test>\r\nReturn-path:\r\n\t<folded@elsewhere.test>\r\n';
const CASES: Array<[string, string]> = [
  [`${FORGED}From: a@b.test\r\nSubject: x\r\n\r\nReturn-Path: <body@stays.test>\r\n`, 'From: a@b.test\r\nSubject: x\r\n\r\nReturn-Path: <body@stays.test>\r\n'],
  ['From: a@b.test\r\nRETURN-PATH : <x@y.test>\r\nX-Return-Path: kept\r\n\r\nbody\r\n', 'From: a@b.test\r\nX-Return-Path: kept\r\n\r\nbody\r\n'],
  ['From: a@b.test\nReturn-Path: <x@y.test>\n\nbody\n', 'From: a@b.test\n\nbody\n'],
  ['From: a@b.test\r\n\r\nno return path here\r\n', 'From: a@b.test\r\n\r\nno return path here\r\n'],
  ['Return-Path: <x@y.test>\r\n', ''],
];

async function filtered(input: Buffer, chunkSize: number): Promise<string> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < input.length; i += chunkSize) chunks.push(input.subarray(i, i + chunkSize));
  const out: Buffer[] = [];
  for await (const c of Readable.from(chunks).pipe(new ReturnPathFilter())) out.push(c as Buffer);
  return Buffer.concat(out).toString('latin1');
}

test('Return-Path fields (folded ones too, any case) leave the header section; the body and other fields stay, in every chunking', async (t) => {
  for (const [input, expected] of CASES) {
    t.is(withoutReturnPath(Buffer.from(input, 'latin1')).toString('latin1'), expected);
    for (const size of [1, 2, 3, 7, 13, 64, 4096]) t.is(await filtered(Buffer.from(input, 'latin1'), size), expected, `chunks of ${size}`);
  }
  const none = Buffer.from('From: a@b.test\r\n\r\nx\r\n');
  t.is(withoutReturnPath(none), none, 'unchanged bytes are the same buffer');
});

test('local delivery over SMTP stores one Return-Path, the envelope sender\'s, in front; the one the message came with is gone', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'rp.test', ['box']);
  await sendMail(app.smtpPort, { from: 'sender@client.example', to: ['box@rp.test'] }, `${FORGED}From: <sender@client.example>\r\nTo: <box@rp.test>\r\nSubject: rp\r\n\r\nbody\r\n`);
  const [email] = await waitForEmails(app, key, 1);
  const raw = (await app.get(`/v1/emails/${email.id}/raw`, key)).body as string;
  t.true(raw.startsWith('Return-Path: <sender@client.example>\r\nReceived: '));
  t.is(raw.match(/^return-path:/gim)?.length, 1);
  t.false(raw.includes('forged@') || raw.includes('folded@'));
  t.true(raw.endsWith('From: <sender@client.example>\r\nTo: <box@rp.test>\r\nSubject: rp\r\n\r\nbody\r\n'));
});

test('a forwarded copy carries no Return-Path, neither ours nor the one it came with', async (t) => {
  const { app, sink } = await startWorld(t);
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, FORGED + message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'no return path'));
  const m = await sink.nth(1);
  const text = m.raw.toString('latin1');
  t.regex(text, /^Subject: no return path$/m);
  t.false(/^return-path:/im.test(text));
});

test('submission: the Return-Path a client wrote is gone; the hosted copy gets the envelope sender\'s in front', async (t) => {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'sub-rp.test', ['ann', 'bob']);
  const transport = nodemailer.createTransport({
    host: '127.0.0.1', port: app.submissionPort, secure: false, requireTLS: true, tls: { rejectUnauthorized: false },
    auth: { user: 'ann@sub-rp.test', pass: 'correct horse battery' },
  });
  t.teardown(() => transport.close());
  await transport.sendMail({
    envelope: { from: 'ann@sub-rp.test', to: ['bob@sub-rp.test'] },
    raw: `${FORGED}From: <ann@sub-rp.test>\r\nTo: <bob@sub-rp.test>\r\nSubject: submitted\r\n\r\nbody\r\n`,
  });
  const emails = await waitForEmails(app, key, 1, 'folder=INBOX');
  const raw = (await app.get(`/v1/emails/${emails[0].id}/raw`, key)).body as string;
  t.true(raw.startsWith('Return-Path: <ann@sub-rp.test>\r\nReceived: '));
  t.is(raw.match(/^return-path:/gim)?.length, 1);
  t.false(raw.includes('forged@') || raw.includes('folded@'));
});
