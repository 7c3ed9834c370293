import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { contentSize } from '../../src/ingest/blobs.js';
import type { InboundMessage, RawDelivery } from '../../src/inbound/types.js';
import { createLogger } from '../../src/logger.js';
import { createAuthenticator } from '../../src/mailauth/verify.js';
import { createRawParser } from '../../src/ingest/parse/parse.js';
import { quietDns } from '../helpers/dns.js';
import { expectedAttachmentSample, FIXTURE_SENDER, loadFixtures, type Fixture } from '../helpers/smtp.js';

// The parser is pure logic over bytes: these tests run it directly on the corpus. The same corpus
// goes through real SMTP sessions and the API in corpus-delivery.test.ts.
const HOSTNAME = 'mx.mailstead.test';
const ARRIVAL = Date.UTC(2025, 5, 1, 12, 0, 0);
const logger = createLogger('silent');
// Mail authentication asks a real DNS server on 127.0.0.1 that publishes nothing (fast NXDOMAIN).
const parser = createRawParser({
  hostname: HOSTNAME,
  logger,
  authenticate: createAuthenticator({ hostname: HOSTNAME, dnsServers: [await quietDns()], logger, timeoutMs: 5_000 }),
});
const RECEIVED = 'Received: from client.example (client.example [127.0.0.1])\r\n\tby mx.mailstead.test (Mailstead) with ESMTP id t1.1\r\n\tfor <bob@mailstead.test>; Sun, 01 Jun 2025 12:00:00 +0000\r\n';

function delivery(f: Fixture): Omit<RawDelivery, 'raw'> {
  const mailFrom = f.spec.mail_from ?? FIXTURE_SENDER;
  return {
    size: f.raw.length,
    mailFrom: mailFrom === '' ? null : mailFrom,
    recipients: [{ address: 'bob@mailstead.test', resolution: { kind: 'deliver', tenantId: 1, mailboxIds: [1], forwards: [] } }],
    remoteAddress: '127.0.0.1',
    heloName: 'client.example',
    tls: false,
    receivedAt: ARRIVAL,
  };
}

/** Field by field, in the API's names, so a failure names the field and the message. */
function assertMessage(t: import('ava').ExecutionContext, f: Fixture, m: InboundMessage) {
  const e = f.spec.expect;
  const where = `${f.name}`;
  if (e.message_id === 'generated') t.regex(m.messageId, /^<[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}@mx\.mailstead\.test>$/, `${where} message_id`);
  else t.is(m.messageId, e.message_id, `${where} message_id`);
  t.is(m.fromEmail, e.from_email, `${where} from_email`);
  t.is(m.fromName, e.from_name, `${where} from_name`);
  t.is(m.toEmail, 'bob@mailstead.test', `${where} to_email`);
  t.is(m.subject, e.subject, `${where} subject`);
  t.deepEqual(m.cc, e.cc, `${where} cc`);
  t.deepEqual(m.bcc, e.bcc, `${where} bcc`);
  t.is(new Date(m.receivedAt).toISOString(), e.received_at === 'arrival' ? new Date(ARRIVAL).toISOString() : e.received_at, `${where} received_at`);
  t.is(m.bodyText, e.body_text, `${where} body_text`);
  t.is(m.bodyHtml, e.body_html, `${where} body_html`);
  const { received, ...headers } = m.headers;
  t.deepEqual(headers, e.headers, `${where} headers`);
  t.is(Array.isArray(received) ? received[0] : received, RECEIVED.slice('Received: '.length, -2).replace(/\r\n/g, ''), `${where} our Received: header comes first`);
  const { count, check } = expectedAttachmentSample(f.spec);
  t.is(m.attachments.length, count, `${where} attachment count`);
  for (const [i, a] of check) {
    const got = m.attachments[i];
    t.like({
      filename: got.filename,
      content_type: got.contentType,
      size: contentSize(got.content),
      content_id: got.contentId ?? null,
      disposition: got.disposition ?? null,
      sha256: Buffer.isBuffer(got.content) ? createHash('sha256').update(got.content).digest('hex') : got.content.sha256,
    }, a, `${where} attachment ${i}`);
  }
  t.truthy(m.auth, `${where} auth`);
}

for (const f of loadFixtures()) {
  test(`corpus ${f.name}: ${f.spec.description}`, async (t) => {
    const raw = Buffer.concat([Buffer.from(RECEIVED), f.raw]);
    assertMessage(t, f, await parser(raw, delivery(f)));
  });
}

test('the corpus has at least 30 messages, each with expectations', (t) => {
  const all = loadFixtures();
  t.true(all.length >= 30);
  for (const f of all) t.true(f.spec.description.length > 0, f.name);
});

test('a spooled (file) message parses the same as one in memory, and a generated Message-ID is stable', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mailstead-parse-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of loadFixtures().filter((x) => /^(16|26|30)-/.test(x.name))) {
    const raw = Buffer.concat([Buffer.from(RECEIVED), f.raw]);
    const path = join(dir, f.name);
    writeFileSync(path, raw);
    const fromFile = await parser({ path }, delivery(f));
    assertMessage(t, f, fromFile);
    const again = await parser(raw, delivery(f));
    t.is(again.messageId, fromFile.messageId, `${f.name}: parsing the same bytes again gives the same id`);
  }
});

test('authentication results are none when the sender\'s domain publishes nothing', async (t) => {
  const f = loadFixtures()[0];
  const m = await parser(Buffer.concat([Buffer.from(RECEIVED), f.raw]), delivery(f));
  t.is(m.auth?.spf?.result, 'none');
  t.is(m.auth?.dkim?.result, 'none');
  t.is(m.auth?.dmarc?.result, 'none');
  t.is(m.auth?.spf?.domain, 'client.example');
});
