import test from 'ava';
import { addressProblem } from '../../src/webhooks/guard.js';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay, verdictOf } from '../../src/webhooks/schedule.js';
import { legacySignature, standardSignature } from '../../src/webhooks/signing.js';

test('retry delays follow the schedule with up to 10 % jitter, then stop', (t) => {
  const steps = [5e3, 300e3, 1800e3, 7200e3, 18000e3, 36000e3, 50400e3, 72000e3, 86400e3];
  t.is(MAX_ATTEMPTS, 10);
  steps.forEach((ms, i) => {
    t.is(retryDelay(i + 1, () => 0), ms);
    t.is(retryDelay(i + 1, () => 0.999999), Math.round(ms * 1.0999999));
  });
  t.is(retryDelay(10, () => 0), null);
  t.is(retryDelay(0, () => 0), null);
});

test('Retry-After is read as seconds or an HTTP date, within 1 s and 24 h', (t) => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  t.is(parseRetryAfter('30', now), 30_000);
  t.is(parseRetryAfter('0', now), 1000);
  t.is(parseRetryAfter('999999', now), 86400e3);
  t.is(parseRetryAfter('Wed, 01 May 2024 12:10:00 GMT', now), 600_000);
  t.is(parseRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now), 1000);
  t.is(parseRetryAfter('soon', now), null);
  t.is(parseRetryAfter(undefined, now), null);
});

test('any 2xx delivers, 410 is gone, everything else retries', (t) => {
  for (const s of [200, 201, 204, 299]) t.is(verdictOf(s), 'delivered');
  t.is(verdictOf(410), 'gone');
  for (const s of [null, 100, 301, 302, 400, 404, 429, 500, 503]) t.is(verdictOf(s), 'retry');
});

test('only public unicast addresses are acceptable targets', (t) => {
  for (const ip of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '2a00:1450:4001::200e']) t.is(addressProblem(ip), null, ip);
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'], ['::1', 'loopback'], ['10.0.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.0.1', 'private'],
    ['fc00::1', 'uniqueLocal'], ['fd00:ec2::254', 'uniqueLocal'], ['169.254.169.254', 'linkLocal'], ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'], ['100.100.100.200', 'carrierGradeNat'], ['224.0.0.251', 'multicast'], ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'], ['::', 'unspecified'], ['255.255.255.255', 'broadcast'], ['::ffff:10.0.0.1', 'private'],
    ['192.0.2.1', 'reserved'], ['64:ff9b::7f00:1', 'rfc6052'],
  ];
  for (const [ip, range] of refused) t.is(addressProblem(ip), range, ip);
});

test('signatures are HMAC-SHA256 keyed with the secret text (vectors from openssl)', (t) => {
  // printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac <secret>
  const secret = 'a'.repeat(64);
  t.is(legacySignature(secret, 1700000000, '{"a":1}'), '5776d99b0b53d013fef7502580613c46c2b95bd249ca653a7ca6ddfef6c6f007');
  // printf '%s' '5.1700000000.{"a":1}' | openssl dgst -sha256 -hmac <secret> -binary | base64
  t.is(standardSignature(secret, '5', 1700000000, '{"a":1}'), 'v1,w6lerR8yM+y7oTHwmVaMTjQG5WeW3xotn9ifuRmyMSo=');
});
