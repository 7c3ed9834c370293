import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quietDns } from '../helpers/dns.js';
import { manualClock } from '../../src/clock.js';
import { databaseFile, openDatabase } from '../../src/db/connection.js';
import { createBlobStore } from '../../src/ingest/blobs.js';
import { decodeMessage, type EncodedMessage } from '../../src/inbound/encoded-message.js';
import type { Resolution } from '../../src/inbound/types.js';
import { createLogger } from '../../src/logger.js';
import { cachedQuota, cachedResolver, RECIPIENT_CACHE_MS } from '../../src/smtp/cache.js';
import { cachedLookup } from '../../src/mailauth/dns.js';
import { decodeWords, fixHeaderBlock, headersObject } from '../../src/message/headers.js';
import { createParserPool } from '../../src/ingest/parse/parse-pool.js';
import { limitConcurrency } from '../../src/ingest/parse/parse.js';
import { storedAddress } from '../../src/smtp/data.js';
import { receivedHeader, returnPathHeader, rfc5322Date } from '../../src/smtp/received.js';
import { routesElsewhere, unquotedLocalPart } from '../../src/smtp/recipients.js';
import { htmlToText } from '../../src/message/body-text.js';

test('decodeWords: B and Q words, adjacent words joined, split multi-byte characters, unknown charsets', (t) => {
  t.is(decodeWords('=?UTF-8?B?SsO8cmdlbg==?= <j@x>'), 'Jürgen <j@x>');
  t.is(decodeWords('=?iso-8859-1?q?Gr=FC=DFe?= aus =?utf-8?q?K=C3=B6ln?='), 'Grüße aus Köln');
  t.is(decodeWords('=?utf-8?q?a?= =?utf-8?q?b?=\r\n =?utf-8?q?c?='), 'abc', 'whitespace between encoded words goes');
  t.is(decodeWords('=?UTF-8?B?5bGx5w==?= =?UTF-8?B?lLDlpKrpg44=?='), '山田太郎', 'a character split across words survives');
  t.is(decodeWords('=?x-unknown?Q?plain_text?='), 'plain text');
  t.is(decodeWords('no words here'), 'no words here');
  t.is(decodeWords('=?utf-8?q?broken'), '=?utf-8?q?broken');
});

test('fixHeaderBlock re-encodes only lines that are not UTF-8', (t) => {
  const latin1 = Buffer.concat([Buffer.from('Subject: Gr'), Buffer.from([0xfc]), Buffer.from('n\r\nX-Ok: Köln\r\n')]);
  t.is(fixHeaderBlock(latin1).toString('utf8'), 'Subject: Grün\r\nX-Ok: Köln\r\n');
  const ascii = Buffer.from('Subject: plain\r\n');
  t.is(fixHeaderBlock(ascii), ascii, 'untouched input is returned as is');
});

test('headersObject: lower-case names, unfolded values, repeats in order', (t) => {
  const h = headersObject([
    { key: 'received', line: 'Received: one\r\n\tcontinued' },
    { key: 'subject', line: 'Subject: =?utf-8?q?caf=C3=A9?=' },
    { key: 'received', line: 'Received: two' },
  ]);
  t.deepEqual(h, { received: ['one\tcontinued', 'two'], subject: 'café' });
});

test('routesElsewhere: routing tricks in the local part and IP literals', (t) => {
  for (const a of ['a%b.example@us.test', 'b.example!a@us.test', '"a@b"@us.test', '"a"@us.test', 'a@b@us.test', 'a\\@b@us.test', 'a@[127.0.0.1]', 'postmaster']) t.true(routesElsewhere(a), a);
  for (const a of ['a@us.test', 'first.last+tag@us.test', "o'brien@us.test"]) t.false(routesElsewhere(a), a);
});

test('unquotedLocalPart: quotes that change nothing go, the routing ones stay for routesElsewhere', (t) => {
  t.is(unquotedLocalPart('"box"@us.test'), 'box@us.test');
  t.is(unquotedLocalPart('"first.last+tag"@us.test'), 'first.last+tag@us.test');
  for (const a of ['"a@b"@us.test', '"a b"@us.test', '"a\\"b"@us.test', '".a"@us.test', '"a..b"@us.test', '""@us.test', 'box@us.test']) {
    t.is(unquotedLocalPart(a), a, a);
  }
  t.true(routesElsewhere(unquotedLocalPart('"victim%outside.example"@us.test')), 'the percent hack stays a relay attempt');
});

test('returnPathHeader: the envelope sender, <> for a bounce, the domain as its A-label, nothing that breaks the line', (t) => {
  t.is(returnPathHeader('a@us.test'), 'Return-Path: <a@us.test>\r\n');
  t.is(returnPathHeader(null), 'Return-Path: <>\r\n');
  t.is(returnPathHeader('shop@bücher.test'), 'Return-Path: <shop@xn--bcher-kva.test>\r\n');
  t.is(returnPathHeader('jürgen@bücher.test'), 'Return-Path: <jürgen@xn--bcher-kva.test>\r\n');
  t.is(returnPathHeader('a>\r\nX-Evil: 1 <b@us.test'), 'Return-Path: <aX-Evil:1b@us.test>\r\n');
  // The same sender again (reused), then another, then the first again.
  t.is(returnPathHeader('a>\r\nX-Evil: 1 <b@us.test'), 'Return-Path: <aX-Evil:1b@us.test>\r\n');
  t.is(returnPathHeader(null), 'Return-Path: <>\r\n');
  t.is(returnPathHeader('shop@bücher.test'), 'Return-Path: <shop@xn--bcher-kva.test>\r\n');
});

test('rfc5322Date: UTC with +0000, the same text within a second and the next second after it', (t) => {
  const at = Date.UTC(2025, 3, 1, 10, 0, 0);
  t.is(rfc5322Date(at), 'Tue, 01 Apr 2025 10:00:00 +0000');
  t.is(rfc5322Date(at + 999), 'Tue, 01 Apr 2025 10:00:00 +0000');
  t.is(rfc5322Date(at + 1000), 'Tue, 01 Apr 2025 10:00:01 +0000');
  t.is(rfc5322Date(at - 1), 'Tue, 01 Apr 2025 09:59:59 +0000');
  t.is(rfc5322Date(Date.UTC(1999, 11, 31, 23, 59, 59, 500)), 'Fri, 31 Dec 1999 23:59:59 +0000');
});

test('receivedHeader: RFC 5321 trace with IPv6 literal, TLS note and a single recipient', (t) => {
  const h = receivedHeader({
    heloName: 'client.example', clientHostname: '[::1]', remoteAddress: '::1', hostname: 'mx.test', protocol: 'ESMTPS',
    id: 'abc.1', tlsCipher: 'TLSv1.3 cipher TLS_AES_256_GCM_SHA384', recipients: ['a@us.test'], at: Date.UTC(2025, 3, 1, 10, 0, 0),
  });
  t.is(h, 'Received: from client.example ([::1] [IPv6:::1])\r\n\tby mx.test (Mailstead) with ESMTPS id abc.1\r\n\t(using TLSv1.3 cipher TLS_AES_256_GCM_SHA384)\r\n\tfor <a@us.test>; Tue, 01 Apr 2025 10:00:00 +0000\r\n');
  const two = receivedHeader({ heloName: 'x (evil)', clientHostname: 'h', remoteAddress: '::ffff:10.0.0.1', hostname: 'mx.test', protocol: 'ESMTP', id: 'i', tlsCipher: null, recipients: ['a@x', 'b@x'], at: 0 });
  t.false(two.includes(' for '), 'several recipients are not listed');
  t.true(two.startsWith('Received: from xevil (h [10.0.0.1])'));
});

test('htmlToText keeps the words, drops markup, styles and scripts', (t) => {
  t.is(htmlToText('<html><head><style>p{}</style></head><body><p>Hi&nbsp;<b>there</b> &amp; &#233;&#x263A;</p><script>x()</script><p>bye</p></body></html>'), 'Hi there & é☺\nbye');
});

test('cachedResolver keeps positive answers for a second and never negative ones', async (t) => {
  const clock = manualClock(0);
  let calls = 0;
  let answer: Resolution = { kind: 'unknown', tenantId: 1 };
  const resolve = cachedResolver(async () => { calls++; return answer; }, clock);
  await resolve('a@x.test');
  await resolve('a@x.test');
  t.is(calls, 2, 'unknown is asked every time');
  answer = { kind: 'deliver', tenantId: 1, mailboxIds: [1], forwards: [] };
  await resolve('A@x.test');
  t.deepEqual(await resolve('a@x.test'), answer);
  t.is(calls, 3);
  clock.advance(RECIPIENT_CACHE_MS + 1);
  await resolve('a@x.test');
  t.is(calls, 4);
});

test('cachedQuota skips mailboxes that had room for the largest message, asks again for tight ones', async (t) => {
  const clock = manualClock(0);
  const asked: Array<[number[], number]> = [];
  let full = new Set<number>();
  let room = Infinity;
  const quota = cachedQuota(async (ids, size) => { asked.push([ids, size]); return ids.filter((id) => full.has(id) || size > room); }, clock, 1000);
  t.deepEqual(await quota([1], 1), []);
  t.deepEqual(await quota([1], 500), []);
  t.is(asked.length, 1, 'the second check was answered from the cache');
  clock.advance(RECIPIENT_CACHE_MS + 1);
  room = 100;
  t.deepEqual(await quota([1], 50), []);
  t.deepEqual(await quota([1], 200), [1]);
  full = new Set([1]);
  t.deepEqual(await quota([1], 1), [1]);
  t.is(asked.length, 7);
});

test('cachedLookup shares queries in flight and remembers failures briefly', async (t) => {
  let now = 0;
  let calls = 0;
  const lookup = cachedLookup(async (name) => {
    calls++;
    if (name === 'down.example') throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    return [['v=spf1 -all']];
  }, () => now);
  const [a, b] = await Promise.all([lookup('x.example', 'TXT'), lookup('X.example', 'TXT')]);
  t.deepEqual(a, b);
  t.is(calls, 1);
  await t.throwsAsync(lookup('down.example', 'TXT'), { message: 'refused' });
  await t.throwsAsync(lookup('down.example', 'TXT'), { message: 'refused' });
  t.is(calls, 2);
  now += 6_000;
  await t.throwsAsync(lookup('down.example', 'TXT'));
  await lookup('x.example', 'TXT');
  t.is(calls, 3, 'failures expire after seconds, answers after a minute');
});

/** A parser's answer as text (parser threads answer with UTF-8 bytes). */

test('the parser pool parses in a thread, and a parse that takes too long costs only its thread', async (t) => {
  const logger = createLogger('silent');
  const delivery = { size: 0, mailFrom: 's@client.example', recipients: [], remoteAddress: '127.0.0.1', heloName: 'client.example', tls: false, receivedAt: 0 };
  const raw = Buffer.from('From: A <a@example.org>\r\nSubject: pooled\r\nMessage-ID: <p@example.org>\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b\r\nContent-Type: application/octet-stream; name=x.bin\r\nContent-Transfer-Encoding: base64\r\n\r\nAAECAw==\r\n--b--\r\n');
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-parse-pool-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const pool = createParserPool({ dataDir, databaseFile: databaseFile(dataDir), hostname: 'mx.test', dnsServers: [await quietDns()], logLevel: 'silent', logger, threads: 1, timeoutMs: 30_000, idleMs: 1_000 });
  t.teardown(() => pool.close());
  const m = decodeMessage(await pool.parse(raw, delivery));
  t.is(m.subject, 'pooled');
  t.like(m.attachments[0], { filename: 'x.bin', size: 4 });
  t.deepEqual([...await createBlobStore(dataDir).readBlob(m.attachments[0].sha256)], [0, 1, 2, 3], 'the thread wrote the attachment blob itself');
  t.is(pool.threads(), 1);
  // A batch goes over in one message and comes back in groups of replies sharing one buffer.
  const subjects = ['eins', 'zwei — ü', 'drei'];
  const many = await Promise.all(subjects.map((s) => pool.parse(Buffer.from(raw.toString().replace('Subject: pooled', `Subject: ${s}`)), delivery)));
  t.deepEqual(many.map((j) => decodeMessage(j).subject), subjects);

  const impatient = createParserPool({ dataDir, databaseFile: databaseFile(dataDir), hostname: 'mx.test', dnsServers: ['127.0.0.1:1'], logLevel: 'silent', logger, threads: 1, timeoutMs: 1, idleMs: 1_000 });
  t.teardown(() => impatient.close());
  await t.throwsAsync(impatient.parse(raw, delivery), { message: /parser thread exited/ });
  t.is((decodeMessage(await pool.parse(raw, delivery))).subject, 'pooled', 'the process and the other pool carry on');
});

test('a parser thread reads queued raw bytes from their row itself, and a row without them fails only its parse', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-parse-queued-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const database = await openDatabase(dataDir);
  t.teardown(() => database.close());
  const insert = database.sqlite.prepare("insert into inbound (kind, message, targets, raw, raw_path, size, created_at) values ('smtp', '{}', '[]', ?, null, 0, 0)");
  const raw = Buffer.from('From: Q <q@example.org>\r\nSubject: from the row\r\nMessage-ID: <q@example.org>\r\n\r\nqueued body\r\n');
  const id = Number(insert.run(raw).lastInsertRowid);
  const empty = Number(insert.run(null).lastInsertRowid);
  const pool = createParserPool({ dataDir, databaseFile: databaseFile(dataDir), hostname: 'mx.test', dnsServers: [await quietDns()], logLevel: 'silent', logger: createLogger('silent'), threads: 1, timeoutMs: 30_000, idleMs: 1_000 });
  t.teardown(() => pool.close());
  const delivery = { size: raw.length, mailFrom: 'q@example.org', recipients: [], remoteAddress: '127.0.0.1', heloName: 'client.example', tls: false, receivedAt: 0 };
  const [stored, missing] = await Promise.allSettled([pool.parseQueued(id, delivery), pool.parseQueued(empty, delivery)]);
  t.is(stored.status, 'fulfilled');
  const m = decodeMessage((stored as PromiseFulfilledResult<EncodedMessage>).value);
  t.is(m.subject, 'from the row');
  t.is(m.bodyText?.trim(), 'queued body');
  t.is(missing.status, 'rejected');
  t.regex(String((missing as PromiseRejectedResult).reason), new RegExp(`inbound row ${empty} has no raw bytes`));
  t.is(pool.threads(), 1, 'the thread carries on');
});

test('limitConcurrency keeps at most `limit` parses under way and runs every call', async (t) => {
  let running = 0;
  let peak = 0;
  const parse = limitConcurrency(async (raw: Buffer | { path: string }, _delivery: unknown) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 2));
    running--;
    return String(raw);
  }, 3);
  const delivery = { size: 0, mailFrom: null, recipients: [], remoteAddress: '127.0.0.1', heloName: 'x', tls: false, receivedAt: 0 };
  const first = Array.from({ length: 5 }, (_, i) => parse(Buffer.from(`m${i}`), delivery));
  // Calls made while places are being handed over must wait their turn too.
  await first[0];
  const more = Array.from({ length: 5 }, (_, i) => parse(Buffer.from(`n${i}`), delivery));
  t.deepEqual(await Promise.all([...first, ...more]), [0, 1, 2, 3, 4].map((i) => `m${i}`).concat([0, 1, 2, 3, 4].map((i) => `n${i}`)));
  t.is(peak, 3);
});

test('storedAddress: lower-cased with the domain as its A-label, the same when asked again, past the size of its memo', (t) => {
  t.is(storedAddress('Box@Bücher.Test'), 'box@xn--bcher-kva.test');
  t.is(storedAddress('Box@Bücher.Test'), 'box@xn--bcher-kva.test');
  t.is(storedAddress('jürgen@bücher.test'), 'jürgen@xn--bcher-kva.test');
  t.is(storedAddress('Odd@[127.0.0.1]'), 'odd@[127.0.0.1]');
  for (let i = 0; i < 1500; i++) t.is(storedAddress(`User${i}@Example.TEST`), `user${i}@example.test`);
  t.is(storedAddress('Box@Bücher.Test'), 'box@xn--bcher-kva.test');
});
