import test from 'ava';
import { rewriteRaw, spamStatusValue, withSpamStatus } from '../../src/spam/header.js';
import { chi2Q, combine } from '../../src/spam/chi2.js';
import { features, hash53 } from '../../src/spam/tokens.js';
import type { SpamVerdict } from '../../src/inbound/spam-verdict.js';

const ham: SpamVerdict = { verdict: 'ham', score: -0.1, threshold: 5, filter: 'builtin', reasons: [{ rule: 'FROM_AUTHENTICATED', score: -0.1 }] };
const FIELD = 'X-Spam-Status: No, score=-0.1 required=5.0 tests=FROM_AUTHENTICATED\r\n';

test('the trace field follows Return-Path and our Received; outside X-Spam-* fields and their continuations go; the body stays', (t) => {
  const raw = 'Return-Path: <a@b.test>\r\nReceived: from x\r\n\tby y\r\nFrom: a@b.test\r\nX-Spam-Flag: YES\r\n\tmore\r\nSubject: s\r\n\r\nX-Spam-Flag: body\r\n';
  t.is(rewriteRaw(Buffer.from(raw), ham).toString(),
    `Return-Path: <a@b.test>\r\nReceived: from x\r\n\tby y\r\n${FIELD}From: a@b.test\r\nSubject: s\r\n\r\nX-Spam-Flag: body\r\n`);
});

test('without trace fields the field comes first; a dropped last field leaves one blank line', (t) => {
  t.is(rewriteRaw(Buffer.from('From: a@b.test\r\nX-Spam-Status: Yes, score=99\r\n\r\nbody\r\n'), ham).toString(), `${FIELD}From: a@b.test\r\n\r\nbody\r\n`);
  t.is(rewriteRaw(Buffer.from('Return-Path: <a@b.test>\r\nReceived: from x\r\n\r\nbody\r\n'), ham).toString(),
    `Return-Path: <a@b.test>\r\nReceived: from x\r\n${FIELD}\r\nbody\r\n`);
});

test('the header map shown by the API carries our status and none from outside', (t) => {
  t.deepEqual(withSpamStatus({ 'x-spam-score': '20', subject: 's' }, ham), { 'x-spam-status': spamStatusValue(ham), subject: 's' });
  t.is(spamStatusValue({ ...ham, verdict: 'junk', score: 7.25, reasons: [{ rule: 'BAYES_SPAM', score: 5 }, { rule: 'DMARC_FAIL', score: 1 }] }),
    'Yes, score=7.3 required=5.0 tests=BAYES_SPAM,DMARC_FAIL');
});

test('chi-square combining: agreeing spam evidence near 1, ham near 0, mixed unsure', (t) => {
  t.true(chi2Q(0, 4) === 1);
  const spammy = Array.from({ length: 20 }, () => ({ spam: 40, ham: 0 }));
  const hammy = Array.from({ length: 20 }, () => ({ spam: 0, ham: 40 }));
  t.true(combine(spammy, 50, 50).probability > 0.99);
  t.true(combine(hammy, 50, 50).probability < 0.01);
  const mixed = combine([...spammy, ...hammy], 50, 50).probability;
  t.true(mixed > 0.3 && mixed < 0.7);
  t.is(combine([], 50, 50).clues, 0);
});

test('features: words (no pairs), header tokens and link hosts; hashes are stable 53-bit integers', (t) => {
  const f = features({
    subject: 'Cheap pills', fromEmail: 'x@spam.example', headers: { 'reply-to': 'y@other.example', 'list-id': '<l>' },
    bodyText: 'buy cheap pills now at http://www.pills.example/buy', bodyHtml: null,
  });
  for (const x of ['s:cheap', 'fd:spam.example', 'rd:other.example', 'h:list-id', 'buy', 'u:www.pills.example', 'u:pills.example']) t.true(f.includes(x), x);
  t.false(f.some((x) => /^o\d:/.test(x)), 'no word pairs');
  t.is(hash53('abc'), hash53('abc'));
  t.true(Number.isSafeInteger(hash53('o1:buy cheap')) && hash53('a') !== hash53('b'));
});

test('features: every header field present but X-Spam-*, and the relays of the Received fields (host names, IPv4 /16)', (t) => {
  const f = features({
    subject: 's', fromEmail: 'x@a.example', bodyText: 'hello there', bodyHtml: null,
    headers: {
      received: ['from relay.a.example (relay.a.example [192.0.2.7]) by mx.b.example', 'from [198.51.100.9] by relay.a.example'],
      'x-mailer': 'Mailer 1', 'x-spam-status': 'Yes, score=9', 'x-spam-flag': 'YES',
    },
  });
  for (const x of ['h:received', 'h:x-mailer', 'rh:relay.a.example', 'rh:mx.b.example', 'rip:192.0', 'rip:198.51']) t.true(f.includes(x), x);
  t.false(f.some((x) => x.startsWith('h:x-spam')), 'another filter\'s verdict is not a feature');
});

test('features: the body cut at white space (long words as skip: tokens, links and addresses in pieces) and the shapes of header fields and links', (t) => {
  const f = features({
    subject: 's', fromEmail: 'x@a.example', bodyHtml: null,
    bodyText: 'Only $99.99 today!! Write to Sales@Offers.example or see http://192.0.2.7/x and https://www.shop.example/aVeryLongPathName qwertyuiopasdfghjkl',
    headers: {
      date: '2 Aug 2002 12:31:57 +0100', 'message-id': '<20020802.ABC123@a.example>', to: 'a@b.example, c@d.example',
      'content-type': 'multipart/alternative; boundary="----=_NextPart_000_0001"', 'content-transfer-encoding': 'Quoted-Printable',
    },
  });
  for (const x of ['$99.99', 'today!!', 'skip:q10', 'offers', 'example', 'email:offers.example', 'proto:http', 'proto:https', 'url:ip-or-userinfo',
    'cte:quoted-printable', 'ctb:----=_a_9_9', 'midl:9.a9', 'date:9 a 9 9:9:9 +9', 'date:no-weekday', 'to:count2', 'h:to']) t.true(f.includes(x), x);
  t.false(f.some((x) => x.startsWith('noheader:')), 'Date, Message-ID and To are there');
  t.true(features({ subject: 's', fromEmail: '', headers: { from: 'x@a.example' }, bodyText: 'hi', bodyHtml: null }).includes('noheader:date'));
  t.false(features({ subject: 's', fromEmail: '', headers: {}, bodyText: 'hi', bodyHtml: null }).some((x) => x.startsWith('noheader:')), 'no header map (HTTP API mail): nothing said of what it lacks');
});
