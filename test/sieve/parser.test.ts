// Parser and validation: exact 1-based line/column errors, required extensions, tags, comparators, limits.
import test from 'ava';
import { parseSieve, runSieve, SIEVE_EXTENSIONS } from '../../src/sieve/index.js';

function error(text: string): { line: number; column: number; message: string } {
  const r = parseSieve(text);
  if (r.ok) throw new Error(`expected an error for ${JSON.stringify(text)}`);
  return r.error;
}

test('a syntax error names its line and column', (t) => {
  const e = error('require "fileinto";\nif true {\n  keep\n}\n');
  t.is(e.line, 4);
  t.is(e.column, 1);
  t.regex(e.message, /^line 4, column 1: syntax error/);
  const unterminated = error('keep;\nif header :is "subject" "x {\n keep;\n}\n');
  t.is(unterminated.line, 5);
});

test('an unknown command, tag or test is refused at its position', (t) => {
  t.like(error('keep;\n  frobnicate;'), { line: 2, column: 3, message: "line 2, column 3: unknown command 'frobnicate'" });
  t.like(error('require "fileinto";\nfileinto :bogus "x";'), { line: 2, column: 10 });
  t.like(error('if frob "x" { keep; }'), { line: 1, column: 4 });
});

test('extensions must be required, offered, and come first; include is not offered', (t) => {
  t.regex(error('fileinto "x";').message, /needs require "fileinto"/);
  t.regex(error('require "include";').message, /unsupported extension "include"/);
  t.regex(error('require "regex";').message, /unsupported extension "regex"/);
  t.regex(error('keep;\nrequire "fileinto";').message, /^line 2, column 1: require must come before/);
  t.regex(error('require "fileinto";\nfileinto :copy "x";').message, /needs require "copy"/);
  for (const ext of SIEVE_EXTENSIONS) t.true(parseSieve(`require "${ext}";`).ok, ext);
  t.false(SIEVE_EXTENSIONS.includes('include'));
});

test('argument types, exclusive tags and comparators are checked', (t) => {
  t.regex(error('redirect 5;').message, /takes a string/);
  t.regex(error('if header :is :contains "a" "b" { keep; }').message, /exclude each other/);
  t.regex(error('if header :comparator "i;frob" "a" "b" { keep; }').message, /unknown comparator/);
  t.regex(error('if header :comparator "i;ascii-numeric" "a" "b" { keep; }').message, /needs require "comparator-i;ascii-numeric"/);
  t.regex(error('require ["relational"];\nif header :value "xx" "a" "b" { keep; }').message, /invalid relational operator/);
  t.regex(error('if size 10 { keep; }').message, /:over or :under/);
  t.regex(error('redirect "not an address";').message, /not a valid address/);
  t.regex(error('else { keep; }').message, /without a preceding if/);
  t.regex(error('if (true) { keep; }').message, /single test, not a test list/);
  t.regex(error('if anyof true { keep; }').message, /needs a test list/);
  t.regex(error('require "date";\nif date "date" "fortnight" "1" { keep; }').message, /unknown date part/);
});

test('scripts over 64 KB are refused; multi-line strings, comments and numbers with quantifiers parse', (t) => {
  t.regex(error('#'.repeat(64 * 1024 + 1)).message, /larger than 65536 bytes/);
  const r = parseSieve('# comment\n/* block\n comment */\nrequire "vacation";\nif size :over 1K { vacation text:\nLine one\n..dot\n.\n; }\n');
  t.true(r.ok);
});

test('mangled scripts never throw: each is refused with a position inside the script, or runs to an outcome', (t) => {
  const base = 'require ["fileinto", "variables", "imap4flags", "vacation", "relational"];\n' +
    'if allof (header :matches "subject" "*[*]*", address :domain "from" "example.org") {\n' +
    '  set "x" "${2}"; addflag "$L"; fileinto "Lists/${x}";\n} elsif header :value "gt" "x-n" "3" { vacation text:\nGone\n..\n.\n; }\n';
  let seed = 42;
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const alphabet = '{}()[];:,"\\#*/ \n\tabc$.0123456789';
  let refused = 0;
  for (let i = 0; i < 1500; i++) {
    const chars = base.split('');
    for (let k = 0; k < 1 + random(3); k++) chars[random(chars.length)] = alphabet[random(alphabet.length)];
    const text = chars.join('');
    const r = parseSieve(text);
    if (!r.ok) {
      refused++;
      const lines = text.split('\n');
      t.true(r.error.line >= 1 && r.error.line <= lines.length + 1, r.error.message);
      t.true(r.error.column >= 1, r.error.message);
      continue;
    }
    const out = runSieve(r.script, {
      raw: Buffer.from('Subject: a [b] c\r\nFrom: x@example.org\r\nX-N: 5\r\n\r\nhi\r\n'), envelope: { from: null, to: 'me@example.com' },
      spam: null, mailboxAddress: 'me@example.com', now: new Date(), folderExists: () => true,
    });
    t.true(out.actions.length > 0);
  }
  t.true(refused > 100, 'most mangled scripts are refused');
});
