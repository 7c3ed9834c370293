import { createHash } from 'node:crypto';
import test from 'ava';
import { withoutReturnPath } from '../../src/smtp/return-path.js';
import { startTestApp } from '../helpers/app.js';
import { createAlias } from '../helpers/mailboxes.js';
import { expectedAttachmentSample, FIXTURE_SENDER, listAll, loadFixtures, provision, sendOn, smtpClient, waitForEmails } from '../helpers/smtp.js';

// Every corpus message travels through a real SMTP session into the real app and is checked
// field by field over the API: what a mail client reading this box would see.
test('the corpus delivered over SMTP reads back field by field over the API', async (t) => {
  t.timeout(240_000);
  const app = await startTestApp(t);
  const { key, mailboxes } = await provision(app, 'corpus.test', ['inbox']);
  const alias = await createAlias(app, key, 'corpus.test', { catch_all: true, goto: 'inbox@corpus.test' });
  t.is(alias.body.status, 'completed');
  const fixtures = loadFixtures();
  const client = await smtpClient(app.smtpPort);
  t.teardown(() => client.close());
  const sentAt = new Map<string, [number, number]>();
  for (const [i, f] of fixtures.entries()) {
    const to = `f${i}@corpus.test`;
    const from = f.spec.mail_from ?? FIXTURE_SENDER;
    const started = Date.now();
    const res = await sendOn(client, { from, to: [to] }, f.raw);
    t.regex(res.response, /^250 /, f.name);
    sentAt.set(to, [started, Date.now()]);
  }
  await waitForEmails(app, key, fixtures.length, '', 120_000);
  const byRecipient = new Map((await listAll(app, key)).map((item) => [item.to_email, item]));

  for (const [i, f] of fixtures.entries()) {
    const to = `f${i}@corpus.test`;
    const item = byRecipient.get(to);
    if (!item) { t.fail(`${f.name}: not stored`); continue; }
    const got = await app.get(`/v1/emails/${item.id}`, key);
    t.is(got.status, 200, f.name);
    const e = got.body.data;
    const x = f.spec.expect;
    t.is(e.mailbox_id, mailboxes['inbox@corpus.test'], `${f.name} mailbox_id`);
    if (x.message_id === 'generated') t.regex(e.message_id, /^<[0-9a-f-]{36}@mx\.mailstead\.test>$/, `${f.name} message_id`);
    else t.is(e.message_id, x.message_id, `${f.name} message_id`);
    t.is(e.from_email, x.from_email, `${f.name} from_email`);
    t.is(e.from_name, x.from_name, `${f.name} from_name`);
    t.is(e.subject, x.subject, `${f.name} subject`);
    t.deepEqual(e.cc, x.cc, `${f.name} cc`);
    t.deepEqual(e.bcc, x.bcc, `${f.name} bcc`);
    if (x.received_at === 'arrival') {
      const [from, until] = sentAt.get(to)!;
      const at = Date.parse(e.received_at);
      t.true(at >= from - 1000 && at <= until + 1000, `${f.name} received_at ${e.received_at} is the arrival time`);
    } else {
      t.is(e.received_at, x.received_at, `${f.name} received_at`);
    }
    t.is(e.body_text, x.body_text, `${f.name} body_text`);
    t.is(e.body_html, x.body_html, `${f.name} body_html`);
    // Our Return-Path: (the envelope sender) is the only one: any the message carried is removed (DECISIONS.md section 21).
    // Our spam trace header is added and outside X-Spam-* fields are gone (DECISIONS.md section 18).
    const { received, 'return-path': returnPath, 'x-spam-status': spamStatus, ...headers } = e.headers;
    const { 'return-path': _carried, ...carried } = x.headers as Record<string, string | string[]>;
    const expected = Object.fromEntries(Object.entries(carried).filter(([k]) => !/^x-spam-(status|flag|score|level)$/.test(k)));
    t.regex(String(spamStatus), /^(Yes|No), score=-?\d+\.\d required=\d+\.\d tests=/, `${f.name} spam trace header`);
    t.deepEqual(headers, expected, `${f.name} headers`);
    t.deepEqual([returnPath].flat(), [`<${f.spec.mail_from ?? FIXTURE_SENDER}>`], `${f.name} return-path`);
    t.regex(Array.isArray(received) ? received[0] : received, new RegExp(`by mx\\.mailstead\\.test \\(Mailstead\\) with ESMTP id \\S+\\tfor <${to}>`), `${f.name} trace header`);
    t.is(typeof e.snippet, 'string', `${f.name} snippet`);
    const { count, check } = expectedAttachmentSample(f.spec);
    t.is(e.attachments.length, count, `${f.name} attachment count`);
    t.is(item.has_attachments, count > 0, `${f.name} has_attachments`);
    for (const [n, a] of check) {
      const g = e.attachments[n];
      t.like(g, { filename: a.filename, content_type: a.content_type, size: a.size, content_id: a.content_id, disposition: a.disposition }, `${f.name} attachment ${n}`);
      const link = await app.get(`/v1/emails/${e.id}/attachments/${g.id}`, key);
      t.is(link.status, 200, `${f.name} attachment ${n} link`);
      const download = await fetch(link.body.data.url.replace(/^https?:\/\/[^/]+\/api/, app.base));
      const sha = createHash('sha256').update(Buffer.from(await download.arrayBuffer())).digest('hex');
      t.is(sha, a.sha256, `${f.name} attachment ${n} content`);
    }
    const raw = await fetch(`${app.base}/v1/emails/${e.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
    const bytes = Buffer.from(await raw.arrayBuffer());
    // Kept exactly, less a Return-Path the message arrived with and outside X-Spam-* fields (DECISIONS.md section 18).
    const whole = withoutReturnPath(f.raw).toString('latin1');
    const split = whole.indexOf('\r\n\r\n');
    const head = split < 0 ? whole : whole.slice(0, split + 2);
    const sent = Buffer.from(head.replace(/^X-Spam-(Status|Flag|Score|Level)\s*:[^\r\n]*\r\n([ \t][^\r\n]*\r\n)*/gim, '') + (split < 0 ? '' : whole.slice(split + 2)), 'latin1');
    t.true(bytes.subarray(bytes.length - sent.length).equals(sent), `${f.name} raw bytes kept exactly`);
  }
});
