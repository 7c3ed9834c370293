import test from 'ava';
import { messageShapes } from '../../src/spam/token-meta.js';
import { classifyIds, featureIds, SENDER_WEIGHT } from '../../src/spam/tokens.js';
import { fromForged } from '../../src/spam/authenticated.js';

const shapes = (m: Parameters<typeof messageShapes>[0]) => {
  const out: string[] = [];
  messageShapes(m, (prefix, value) => out.push(prefix + value));
  return out;
};

const message = {
  subject: 'Quarterly figures',
  fromEmail: 'ann.smith@example.org',
  headers: {
    received: 'from relay.example.org by mx.test; Tue, 3 Sep 2002 10:30:00 +0000',
    from: 'Ann Smith <ann.smith@example.org>', to: 'bob@example.net', subject: 'Quarterly figures',
    date: 'Tue, 3 Sep 2002 10:00:00 +0000', 'message-id': '<1@example.org>', 'list-id': '<l.example.org>',
  },
  bodyText: 'The figures are attached.',
  bodyHtml: null,
};

test('whole-message features: the From name against the address, Date against the newest Received, the share of 8-bit text, the sender\'s field order', (t) => {
  t.deepEqual(shapes(message), ['meta:from-name-matches', 'meta:date-lag0', 'meta:8bit0', 'horder:from>to>subject>date>message-id']);
  const odd = shapes({
    ...message, subject: 'Gr\u00fc\u00dfe \u00e0 \u00e9t\u00e9 \u00fc', bodyText: '\u00e9t\u00e9 \u00e0 la plage',
    headers: { ...message.headers, from: 'Best Offers <x9@example.org>', date: 'Thu, 5 Sep 2002 10:00:00 +0000' },
  });
  t.true(odd.includes('meta:from-name-other'));
  t.true(odd.includes('meta:date-lagfuture'), 'dated two days after it was received');
  t.true(odd.includes('meta:subj8bitmany'));
  t.not(odd.find((f) => f.startsWith('meta:8bit')), 'meta:8bit0');
  t.deepEqual(shapes({ ...message, headers: { ...message.headers, date: 'someday' } }).filter((f) => f.startsWith('meta:date')), ['meta:date-bad']);
  t.deepEqual(shapes({ ...message, headers: {} }), [], 'mail posted to the API without headers says nothing of its sender');
});

test('classifying counts the sender\'s address and domain SENDER_WEIGHT times, unless authentication says the From address is forged', (t) => {
  const plain = featureIds(message);
  const weighed = classifyIds(message);
  t.is(weighed.length, plain.length + 2 * (SENDER_WEIGHT - 1));
  t.deepEqual(weighed.slice(0, plain.length), plain);
  t.deepEqual(classifyIds(message, false), plain);
  t.deepEqual(classifyIds({ ...message, fromEmail: '' }), featureIds({ ...message, fromEmail: '' }), 'no sender, nothing to weigh');
  t.true(fromForged({ dmarc: { result: 'fail' } } as any));
  t.false(fromForged({ dmarc: { result: 'none' }, spf: { result: 'fail' } } as any), 'SPF speaks of the envelope, not of From');
  t.false(fromForged(null));
});
