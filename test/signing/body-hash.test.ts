import test from 'ava';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { relaxedBodyHash } from '../../src/signing/body-hash.js';

/** mailauth's relaxed SHA-256 body hash: what its verifier computes. */
function mailauthHash(body: Buffer): string {
  const hasher = dkimBody('relaxed', 'sha256', false);
  if (body.length > 0) hasher.update(body);
  return hasher.digest('base64');
}

const CRAFTED = [
  '',
  '\r\n',
  '\r\n\r\n\r\n',
  'a\r\n',
  'a',
  'a ',
  'a\r\n\r\n',
  'Trailing spaces stay   \r\n\r\n\r\n',
  ' leading space\r\n',
  '  two leading\r\n',
  'tab\there\r\n',
  'mixed \t \t runs\t\r\n',
  'a\r\n \r\n\t\r\nb\r\n',
  'a\r\n \r\n\t\r\n',
  'only lf\nlines\n',
  'mixed\r\nendings\n\r\n',
  'bare\rcr\r\n',
  'a \r b\r\n',
  '\u00e9\u00ff 8-bit  bytes \r\n',
  '.\r\n..leading dots\r\n',
];

test('the relaxed body hash equals mailauth\'s for crafted bodies (CRLF, bare LF or CR, no final break, 8-bit bytes)', (t) => {
  for (const text of CRAFTED) {
    const body = Buffer.from(text, 'latin1');
    t.is(relaxedBodyHash(body), mailauthHash(body), JSON.stringify(text));
  }
});

test('the relaxed body hash equals mailauth\'s for 2,000 random bodies of spaces, tabs, line breaks and text', (t) => {
  // A fixed linear congruential sequence: the same bodies at every run.
  let seed = 12345;
  // The upper bits: the low bits of such a sequence repeat with short periods.
  const next = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed >>> 12; };
  const alphabet = [' ', ' ', '\t', '\r\n', '\r\n', 'a', 'b', '.', '\u00e9', '\n', '\r'];
  let fastPath = 0;
  for (let i = 0; i < 2_000; i++) {
    const len = next() % 60;
    let text = '';
    // Most bodies keep to CRLF line breaks and end with one (the fast path), some do not.
    const crlfOnly = next() % 4 !== 0;
    for (let j = 0; j < len; j++) text += alphabet[next() % (crlfOnly ? alphabet.length - 2 : alphabet.length)];
    if (crlfOnly && next() % 5 !== 0) text += '\r\n';
    if (crlfOnly && text.endsWith('\r\n')) fastPath++;
    const body = Buffer.from(text, 'latin1');
    t.is(relaxedBodyHash(body), mailauthHash(body), JSON.stringify(text));
  }
  t.true(fastPath > 1_000);
});
