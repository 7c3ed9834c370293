// The interpreter on real messages: each extension's behaviour, implicit keep rules, runtime errors.
import test from 'ava';
import { parseSieve, runSieve, type SieveMessageInput, type SieveOutcome } from '../../src/sieve/index.js';

const MESSAGE = [
  'From: "Joe" <joe+news@example.org>',
  'To: me+lists@example.com, =?utf-8?q?J=C3=B6rg?= <jorg@example.de>',
  'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?= from the list',
  'Date: Tue, 1 Apr 2025 09:06:31 -0800',
  'Received: from a by b; Wed, 2 Apr 2025 10:00:00 +0000',
  'Received: from c by d; Thu, 3 Apr 2025 10:00:00 +0000',
  'X-Score: 12',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="zz"',
  '',
  '--zz',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'The secret word is sch=C3=B6n.',
  '--zz',
  'Content-Type: application/octet-stream',
  'Content-Transfer-Encoding: base64',
  '',
  'AAEC',
  '--zz--',
  '',
].join('\r\n');

function run(script: string, over: Partial<SieveMessageInput> = {}): SieveOutcome {
  const parsed = parseSieve(script);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return runSieve(parsed.script, {
    raw: Buffer.from(MESSAGE), envelope: { from: 'joe@example.org', to: 'me+lists@example.com' }, spam: null,
    mailboxAddress: 'me@example.com', now: new Date('2025-04-01T12:00:00Z'), folderExists: (n) => n !== 'Missing', ...over,
  });
}

test('an empty script keeps; discard, fileinto, redirect and reject cancel the implicit keep; :copy does not', (t) => {
  t.deepEqual(run('').actions, [{ type: 'keep', flags: [] }]);
  t.deepEqual(run('discard;').actions, [{ type: 'discard' }]);
  t.deepEqual(run('require "fileinto"; fileinto "A";').actions, [{ type: 'fileinto', folder: 'A', create: false, flags: [], copy: false }]);
  t.deepEqual(run('redirect "x@example.net";').actions, [{ type: 'redirect', address: 'x@example.net', copy: false }]);
  t.deepEqual(run('require "copy"; redirect :copy "x@example.net";').actions.map((a) => a.type), ['redirect', 'keep']);
  t.deepEqual(run('require ["fileinto", "copy"]; fileinto :copy "A";').actions.map((a) => a.type), ['fileinto', 'keep']);
  t.deepEqual(run('require "ereject"; ereject "go away";').actions, [{ type: 'reject', reason: 'go away', ereject: true }]);
});

test('fileinto a missing folder keeps into INBOX unless :create; mailboxexists asks the store', (t) => {
  t.deepEqual(run('require "fileinto"; fileinto "Missing";').actions, [{ type: 'keep', flags: [] }]);
  t.deepEqual(run('require ["fileinto", "mailbox"]; fileinto :create "Missing";').actions,
    [{ type: 'fileinto', folder: 'Missing', create: true, flags: [], copy: false }]);
  t.deepEqual(run('require ["fileinto", "mailbox"]; if mailboxexists "Missing" { discard; }').actions.map((a) => a.type), ['keep']);
});

test('a runtime error keeps the message and reports its position', (t) => {
  const out = run('redirect "a@example.net";\nredirect "b@example.net";\nredirect "c@example.net";\nredirect "d@example.net";\nredirect "e@example.net";');
  t.deepEqual(out.actions, [{ type: 'keep', flags: [] }]);
  t.is(out.error?.line, 5);
  t.regex(out.error?.message ?? '', /^line 5, column 1: more than 4 redirects/);
  const conflict = run('require "reject";\nkeep;\nreject "no";');
  t.is(conflict.error?.line, 3);
});

test('headers are decoded (RFC 2047); address parts and subaddress :user/:detail', (t) => {
  t.deepEqual(run('require "fileinto"; if header :contains "subject" "Grüße" { fileinto "A"; }').actions.map((a) => a.type), ['fileinto']);
  t.is(run('require "fileinto"; if address :is :domain "from" "EXAMPLE.org" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["fileinto", "subaddress"]; if address :detail "to" "lists" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["fileinto", "subaddress"]; if address :user "to" "jorg" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["fileinto", "subaddress", "envelope"]; if envelope :detail "to" "lists" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["fileinto", "envelope"]; if envelope :is "from" "" { fileinto "A"; }', { envelope: { from: null, to: 'x@y.z' } }).actions[0].type, 'fileinto');
});

test('variables: :matches captures, modifiers, string test; encoded-character', (t) => {
  const out = run('require ["fileinto", "variables"];\nif header :matches "from" "*<*+*@*>" { set :upperfirst "tag" "${3}"; fileinto "Lists/${tag}/${4}"; }');
  t.deepEqual(out.actions[0], { type: 'fileinto', folder: 'Lists/News/example.org', create: false, flags: [], copy: false });
  t.is(run('require ["fileinto", "variables"]; set :length "n" "héllo"; if string :is "${n}" "5" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["fileinto", "encoded-character"]; fileinto "${hex:41 42}${unicode:263a}";').actions[0].type, 'fileinto');
  t.like(run('require ["fileinto", "encoded-character"]; fileinto "${hex:41 42}${unicode:263a}";').actions[0], { folder: 'AB☺' });
});

test('imap4flags: flags follow the internal variable; :flags overrides it', (t) => {
  t.deepEqual(run('require "imap4flags"; setflag "\\\\Seen"; addflag ["$A", "$B"]; removeflag "$A";').actions, [{ type: 'keep', flags: ['\\Seen', '$B'] }]);
  t.deepEqual(run('require ["imap4flags", "fileinto"]; addflag "$X"; fileinto :flags "$Y" "F";').actions,
    [{ type: 'fileinto', folder: 'F', create: false, flags: ['$Y'], copy: false }]);
  t.is(run('require ["imap4flags", "fileinto"]; addflag "$X"; if hasflag :is "$x" { fileinto "F"; }').actions[0].type, 'fileinto');
});

test('body, relational with i;ascii-numeric, index, date and currentdate', (t) => {
  t.is(run('require ["body", "fileinto"]; if body :text :contains "schön" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["body", "fileinto"]; if body :content "application" :contains "schön" { fileinto "A"; }').actions[0].type, 'keep');
  t.is(run('require ["relational", "comparator-i;ascii-numeric", "fileinto"]; if header :value "gt" :comparator "i;ascii-numeric" "x-score" "9" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["relational", "comparator-i;ascii-numeric", "fileinto"]; if address :count "eq" :comparator "i;ascii-numeric" "to" "2" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["date", "index", "fileinto"]; if date :index 2 :zone "+0000" "received" "day" "03" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["date", "index", "fileinto"]; if date :index 1 :last :zone "+0000" "received" "day" "03" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["date", "fileinto"]; if date :originalzone "date" "zone" "-0800" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["date", "fileinto"]; if currentdate :zone "+0000" "date" "2025-04-01" { fileinto "A"; }').actions[0].type, 'fileinto');
});

test('spamtest and spamtestplus scale the score against the threshold; 0 when unclassified', (t) => {
  const script = 'require ["spamtest", "relational", "comparator-i;ascii-numeric", "fileinto"]; if spamtest :value "ge" :comparator "i;ascii-numeric" "10" { fileinto "Junk"; }';
  t.is(run(script, { spam: { score: 6, threshold: 5, verdict: 'junk' } }).actions[0].type, 'fileinto');
  t.is(run(script, { spam: { score: 4.9, threshold: 5, verdict: 'ham' } }).actions[0].type, 'keep');
  t.is(run('require ["spamtest", "fileinto"]; if spamtest "0" { fileinto "A"; }').actions[0].type, 'fileinto');
  t.is(run('require ["spamtestplus", "fileinto"]; if spamtest :percent "50" { fileinto "A"; }', { spam: { score: 2.5, threshold: 5, verdict: 'ham' } }).actions[0].type, 'fileinto');
});

test('vacation: defaults, :seconds minimum, :addresses include the mailbox, one per message', (t) => {
  t.deepEqual(run('require "vacation"; vacation "away";').actions[0],
    { type: 'vacation', reason: 'away', addresses: ['me@example.com'], mime: false, seconds: 604800 });
  t.like(run('require "vacation-seconds"; vacation :seconds 5 :subject "Out" :from "me@example.com" :addresses ["alt@example.com"] :handle "h" "away";').actions[0],
    { seconds: 60, subject: 'Out', from: 'me@example.com', addresses: ['me@example.com', 'alt@example.com'], handle: 'h' });
  t.regex(run('require "vacation"; vacation "a"; vacation "b";').error?.message ?? '', /one vacation/);
});

test('work is bounded: a pathological :matches pattern on a long header finishes', (t) => {
  const long = 'a'.repeat(4000);
  const out = run(`require ["variables", "fileinto"]; set "v" "${long}"; if string :matches "\${v}" "*a*a*a*a*a*a*a*a*a*a*b" { fileinto "A"; }`);
  t.deepEqual(out.actions, [{ type: 'keep', flags: [] }]);
});
