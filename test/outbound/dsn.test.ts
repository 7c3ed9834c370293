import test from 'ava';
import { simpleParser } from 'mailparser';
import { buildDsn, type DsnInput } from '../../src/outbound/dsn.js';

const ORIGINAL = Buffer.from([
  'Received: from client.origin.test by mx.mailstead.test; Thu, 26 Nov 2026 03:59:59 +0000',
  'From: Alice <alice@origin.test>',
  'To: list@alias.test',
  'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
  'Message-ID: <m1@origin.test>',
  '',
  'The body is not returned.',
  '',
].join('\r\n'));

const BASE: DsnInput = {
  reportingMta: 'mx.mailstead.test',
  originalSender: 'alice@origin.test',
  recipient: 'bob@dest.test',
  status: '5.1.1',
  diagnostic: '550 5.1.1 <bob@dest.test>: no such user',
  remoteMta: 'mx1.dest.test',
  originalHeaders: ORIGINAL,
  arrivalDate: new Date('2026-11-26T04:00:00Z'),
  now: new Date('2026-11-26T04:05:30Z'),
};

/** The MIME parts of a multipart message, each parsed by mailparser as a message of its own. */
async function parts(raw: Buffer, boundary: string) {
  const text = raw.toString('latin1');
  const pieces = text.split(`--${boundary}`).slice(1, -1).map((p) => p.replace(/^\r\n/, ''));
  return Promise.all(pieces.map((p) => simpleParser(Buffer.from(p, 'latin1'))));
}

/** The fields of a message/delivery-status body: per-message group, then the recipient group. */
function statusGroups(body: string): Array<Map<string, string>> {
  return body.trim().split(/\r?\n\r?\n/).map((group) => {
    const fields = new Map<string, string>();
    for (const line of group.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      fields.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    return fields;
  });
}

test('RFC 3464 report: headers, the three parts, every delivery-status field, the original headers', async (t) => {
  const raw = await buildDsn(BASE);
  const mail = await simpleParser(raw);
  t.is(mail.from?.value[0].address, 'MAILER-DAEMON@mx.mailstead.test');
  t.is(mail.from?.value[0].name, 'Mail Delivery System');
  t.deepEqual((Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value.map((v) => v.address), ['alice@origin.test']);
  t.is(mail.subject, 'Undelivered Mail Returned to Sender');
  t.is(mail.date?.toISOString(), '2026-11-26T04:05:30.000Z');
  t.regex(mail.messageId ?? '', /^<dsn\.[a-z0-9]+\.[0-9a-f]{18}@mx\.mailstead\.test>$/);
  t.is(mail.headers.get('auto-submitted'), 'auto-replied');
  const type = mail.headers.get('content-type') as { value: string; params: Record<string, string> };
  t.is(type.value, 'multipart/report');
  t.is(type.params['report-type'], 'delivery-status');

  const [human, report, headers] = await parts(raw, type.params.boundary);
  t.is((human.headers.get('content-type') as { value: string }).value, 'text/plain');
  t.regex(human.text ?? '', /<bob@dest\.test>: the recipient address does not exist/);
  t.regex(human.text ?? '', /550 5\.1\.1 <bob@dest\.test>: no such user/);

  t.is((report.headers.get('content-type') as { value: string }).value, 'message/delivery-status');
  t.is(report.headers.get('content-transfer-encoding'), '7bit');
  const [perMessage, perRecipient] = statusGroups(report.text ?? '');
  t.deepEqual(Object.fromEntries(perMessage), {
    'reporting-mta': 'dns; mx.mailstead.test',
    'arrival-date': 'Thu, 26 Nov 2026 04:00:00 +0000',
  });
  t.deepEqual(Object.fromEntries(perRecipient), {
    'final-recipient': 'rfc822; bob@dest.test',
    action: 'failed',
    status: '5.1.1',
    'remote-mta': 'dns; mx1.dest.test',
    'diagnostic-code': 'smtp; 550 5.1.1 <bob@dest.test>: no such user',
    'last-attempt-date': 'Thu, 26 Nov 2026 04:05:30 +0000',
  });

  t.is(mail.attachments.length, 1);
  t.is(mail.attachments[0].contentType, 'text/rfc822-headers');
  t.is(headers.headers.get('content-description'), 'Undelivered message headers');
  const returned = mail.attachments[0].content.toString('latin1');
  t.is(returned, ORIGINAL.toString('latin1').split('\r\n\r\n')[0] + '\r\n');
  t.false(returned.includes('The body is not returned'));
});

test('a multi-line remote reply becomes one folded Diagnostic-Code; no Remote-MTA or diagnostic when unknown', async (t) => {
  const long = await buildDsn({
    ...BASE,
    diagnostic: '550-5.7.1 Our policy does not allow this message from your server to be accepted\r\n550 5.7.1 see https://help.dest.test/why for details about it',
    status: '5.7.1',
  });
  const text = long.toString('latin1');
  t.regex(text, /Diagnostic-Code: smtp; 550-5\.7\.1 Our policy[^]*?550 5\.7\.1 see https:\/\/help\.dest\.test\/why for\r\n details about it\r\n/);
  for (const line of text.split('\r\n')) t.true(line.length <= 998);
  t.regex(text, /Status: 5\.7\.1/);

  const dnsOnly = (await buildDsn({ ...BASE, status: '5.1.10', diagnostic: null, remoteMta: null })).toString('latin1');
  t.notRegex(dnsOnly, /Remote-MTA|Diagnostic-Code/);
  t.regex(dnsOnly, /Status: 5\.1\.10/);
  t.regex(dnsOnly, /null MX/);
});

test('an expired message reports 4.4.7 as failed; a malformed status is reported as 5.0.0', async (t) => {
  const expired = await simpleParser(await buildDsn({ ...BASE, status: '4.4.7', diagnostic: '451 4.3.0 try later' }));
  t.is(expired.subject, 'Undelivered Mail: delivery period expired');
  t.regex(expired.text ?? '', /Action: failed\r?\nStatus: 4\.4\.7/);
  const odd = (await buildDsn({ ...BASE, status: 'garbage' })).toString('latin1');
  t.regex(odd, /Status: 5\.0\.0\r\n/);
});

test('hostile text stays inside its field: CR/LF, 8-bit and non-ASCII addresses', async (t) => {
  const raw = await buildDsn({
    ...BASE,
    recipient: 'jösé@dest.test',
    diagnostic: '550 nope\r\nX-Injected: yes\r\n\r\nbody',
    remoteMta: 'mx1.dest.test\r\nX-Also: no',
  });
  const text = raw.toString('latin1');
  t.notRegex(text, /^X-Injected:/m);
  t.notRegex(text, /^X-Also:/m);
  t.regex(text, /Diagnostic-Code: smtp; 550 nope X-Injected: yes body\r\n/);
  t.regex(text, /Final-Recipient: utf-8; j\\x\{F6\}s\\x\{E9\}@dest\.test\r\n/);
  const report = text.split('Content-Type: message/delivery-status')[1].split('Content-Type: text/rfc822-headers')[0];
  t.true(/^[\x00-\x7f]*$/.test(report));
});

test('only the header section is returned, and a huge one is cut at a line boundary', async (t) => {
  const headerLines = Array.from({ length: 2000 }, (_, i) => `X-Filler-${i}: ${'z'.repeat(60)}`).join('\r\n');
  const huge = Buffer.from(`${headerLines}\r\n\r\nbody\r\n`);
  const mail = await simpleParser(await buildDsn({ ...BASE, originalHeaders: huge }));
  const returned = mail.attachments[0].content.toString('latin1');
  t.true(returned.length <= 64 * 1024);
  t.true(returned.length > 60 * 1024);
  t.regex(returned, /\r\n$/);
  t.true(returned.split('\r\n').filter(Boolean).every((l) => /^X-Filler-\d+: z{60}$/.test(l)));
  // Headers only (no body) are returned as given.
  const bare = await simpleParser(await buildDsn({ ...BASE, originalHeaders: Buffer.from('Subject: x\r\n') }));
  t.is(bare.attachments[0].content.toString(), 'Subject: x\r\n');
});
