import test from 'ava';
import {
  compareMx, compareTxt, evaluateRecords, joinTxt, normalizeMxTarget, normalizeTxt, queryKey, txtFamily,
  type Answer, type MxAnswer, type TxtAnswer,
} from '../../src/dns/compare.js';
import { nextDomainState, provesOwnership } from '../../src/dns/status.js';

const mx = (...exchanges: string[]): Answer<MxAnswer> => ({ kind: 'records', records: exchanges.map((exchange, i) => ({ exchange, priority: 10 * (i + 1) })) });
const txt = (...records: Array<string | string[]>): TxtAnswer => ({ kind: 'records', records: records.map((r) => (Array.isArray(r) ? r : [r])) });
const none = { kind: 'none' } as const;
const err = (code: string) => ({ kind: 'error', code }) as const;

test('MX targets compare case-insensitively, with or without the trailing dot', (t) => {
  t.is(normalizeMxTarget('MX1.Example.ORG.'), 'mx1.example.org');
  t.is(compareMx('mx1.mailstead.test', mx('MX1.MAILSTEAD.TEST.')), 'verified');
  t.is(compareMx('mx1.mailstead.test', mx('other.test', 'mx1.mailstead.test')), 'verified');
  t.is(compareMx('mx1.mailstead.test', mx('mx2.mailstead.test')), 'mismatch');
  t.is(compareMx('mx1.mailstead.test', none), 'missing');
  t.is(compareMx('mx1.mailstead.test', { kind: 'records', records: [] }), 'missing');
  t.is(compareMx('mx1.mailstead.test', err('ETIMEOUT')), null);
});

test('TXT chunks are joined, and values compare by kind', (t) => {
  const token = 'mailstead-verification=0123456789abcdef0123456789abcdef';
  t.is(joinTxt(['v=spf1 ', 'mx -all']), 'v=spf1 mx -all');
  t.is(compareTxt(token, txt([token.slice(0, 10), token.slice(10)])), 'verified');
  t.is(compareTxt(token, txt(token.toUpperCase())), 'verified');
  t.is(compareTxt(token, txt('mailstead-verification=ffffffffffffffffffffffffffffffff')), 'mismatch');
  t.is(compareTxt(token, txt('google-site-verification=abc')), 'missing');
  t.is(compareTxt(token, none), 'missing');
  t.is(compareTxt(token, err('ESERVFAIL')), null);
  t.is(compareTxt('v=spf1 mx -all', txt('google-site-verification=abc', ' v=spf1  MX -all')), 'verified');
  t.is(compareTxt('v=spf1 mx -all', txt('v=spf1 mx ~all')), 'mismatch');
  t.is(compareTxt('v=DMARC1; p=none', txt('v=DMARC1; p=reject')), 'mismatch');
});

test('DKIM and DMARC tag lists ignore spacing, order and a trailing semicolon, but not the key', (t) => {
  const key = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA' + 'x'.repeat(300) + 'IDAQAB';
  const expected = `v=DKIM1; k=rsa; p=${key}`;
  t.is(normalizeTxt(`v=DKIM1;k=rsa;p=${key};`), normalizeTxt(expected));
  t.is(normalizeTxt(`v=dkim1; p=${key.slice(0, 200)} ${key.slice(200)} ; k = rsa`), normalizeTxt(expected));
  const long = txt([expected.slice(0, 255), expected.slice(255)]);
  t.is(compareTxt(expected, long), 'verified');
  t.is(compareTxt(expected, txt(`v=DKIM1; k=rsa; p=${key.toLowerCase()}`)), 'mismatch');
  t.is(compareTxt('v=DMARC1; p=none', txt('v=DMARC1;p=none;')), 'verified');
  t.is(txtFamily(expected), 'v=dkim1');
  t.is(txtFamily('v=spf1 mx -all'), 'v=spf1');
  t.is(txtFamily('mailstead-verification=abc'), 'mailstead-verification');
});

test('a failed query makes the whole check inconclusive; NXDOMAIN/NODATA do not', (t) => {
  const records = [
    { type: 'MX', name: 'example.org', value: 'mx1.mailstead.test' },
    { type: 'MX', name: 'example.org', value: 'mx2.mailstead.test' },
    { type: 'TXT', name: '_mailstead.example.org', value: 'mailstead-verification=abc' },
  ];
  const answers = new Map<string, Answer<MxAnswer> | TxtAnswer>([
    [queryKey('MX', 'example.org'), mx('mx1.mailstead.test.')],
    [queryKey('TXT', '_mailstead.example.org'), none],
  ]);
  t.deepEqual(evaluateRecords(records, answers), { inconclusive: null, statuses: ['verified', 'mismatch', 'missing'] });
  answers.set(queryKey('TXT', '_mailstead.example.org'), err('ETIMEOUT'));
  t.deepEqual(evaluateRecords(records, answers), { inconclusive: { type: 'TXT', name: '_mailstead.example.org', code: 'ETIMEOUT' } });
  // A record whose query was not made keeps its status.
  t.deepEqual(evaluateRecords(records.slice(0, 1), new Map()), { inconclusive: null, statuses: [null] });
});

test('ownership needs the verification TXT and both MX records verified', (t) => {
  const rec = (type: string, name: string, status: string) => ({ type, name, status });
  const ok = [rec('MX', 'a.test', 'verified'), rec('MX', 'a.test', 'verified'), rec('TXT', '_mailstead.a.test', 'verified'), rec('TXT', 'a.test', 'missing')];
  t.true(provesOwnership('a.test', ok));
  t.false(provesOwnership('a.test', ok.map((r, i) => (i === 1 ? { ...r, status: 'mismatch' } : r))));
  t.false(provesOwnership('a.test', ok.map((r, i) => (i === 2 ? { ...r, status: 'missing' } : r))));
  t.false(provesOwnership('a.test', ok.slice(1)));
  t.false(provesOwnership('a.test', []));
});

test('domain status: pending -> verified -> unverified after 3 failures in a row -> verified', (t) => {
  let s = { status: 'pending', failedChecks: 0, verifiedAt: null as number | null };
  s = nextDomainState(s, false, 1);
  t.deepEqual(s, { status: 'pending', failedChecks: 0, verifiedAt: null });
  s = nextDomainState(s, true, 2);
  t.deepEqual(s, { status: 'verified', failedChecks: 0, verifiedAt: 2 });
  s = nextDomainState(s, false, 3);
  s = nextDomainState(s, false, 4);
  t.deepEqual(s, { status: 'verified', failedChecks: 2, verifiedAt: 2 });
  s = nextDomainState(s, true, 5);
  t.deepEqual(s, { status: 'verified', failedChecks: 0, verifiedAt: 2 });
  for (const now of [6, 7, 8]) s = nextDomainState(s, false, now);
  t.deepEqual(s, { status: 'unverified', failedChecks: 3, verifiedAt: 2 });
  s = nextDomainState(s, false, 9);
  t.is(s.status, 'unverified');
  s = nextDomainState(s, true, 10);
  t.deepEqual(s, { status: 'verified', failedChecks: 0, verifiedAt: 10 });
  // Statuses this loop does not own are left alone.
  const other = { status: 'suspended', failedChecks: 0, verifiedAt: null };
  t.is(nextDomainState(other, true, 11), other);
});
