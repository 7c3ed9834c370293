import test from 'ava';
import { addressProblem, normalizeAddress } from '../../src/message/address.js';
import { hostnameProblem, normalizeHostname } from '../../src/message/hostname.js';

test('valid hostnames', (t) => {
  for (const h of ['example.org', 'EXAMPLE.org', 'a.b.c.example', 'x-1.example', `${'a'.repeat(63)}.org`, 'bücher.example', '1example.org']) {
    t.is(hostnameProblem(h), null, h);
  }
  t.is(normalizeHostname('Example.ORG'), 'example.org');
  t.is(normalizeHostname('Bücher.example'), 'xn--bcher-kva.example');
});

test('invalid hostnames and why', (t) => {
  const cases: Record<string, RegExp> = {
    '': /empty/, localhost: /two labels/, 'http://a.org': /scheme/, 'a.org:80': /port/, 'a.org/x': /path/,
    '10.0.0.1': /IP/, '[::1]': /IP/, '::1': /IP/, 'a.org.': /dot/, 'a_b.org': /underscore/, '-a.org': /invalid label/,
    'a-.org': /invalid label/, 'a..org': /empty labels/, 'a b.org': /spaces/, 'a.123': /all-numeric label/, 'xn--zz.org': /invalid internationalised label/, 'a!.org': /invalid label/,
  };
  for (const [h, why] of Object.entries(cases)) t.regex(hostnameProblem(h) ?? 'valid', why, h);
});

test('addresses', (t) => {
  t.is(addressProblem('ann.lee+tag@example.org'), null);
  t.is(normalizeAddress('Ann@Example.ORG'), 'ann@example.org');
  for (const a of ['plain', '@example.org', 'ann@', 'a..b@example.org', '.a@example.org', 'a"b@example.org', `${'a'.repeat(65)}@example.org`, 'ann@localhost', 'ann@1.2.3.4']) {
    t.not(addressProblem(a), null, a);
  }
});
