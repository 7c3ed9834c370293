// Scripts and messages run through both sieve-test and our engine (sieve-test-compare.test.ts).
export interface CompareCase { name: string; script: string; message: string; from?: string; to?: string }

const msg = (headers: string, body = 'Hello there.\r\n'): string => `${headers.trim().split('\n').join('\r\n')}\r\n\r\n${body}`;
const PLAIN = msg(`From: Joe Bloggs <joe+news@example.org>
To: Me <me+lists@example.com>
Cc: other@example.net
Subject: Weekly report: numbers
Date: Tue, 1 Apr 2025 09:06:31 -0800
Message-ID: <1@example.org>
X-Priority: 3`);
const LIST = msg(`From: list-bounces@lists.example.org
To: dev@lists.example.org
Subject: [dev] Release 1.2
List-Id: <dev.lists.example.org>
Precedence: list`);
const ENCODED = msg(`From: =?utf-8?q?J=C3=B6rg?= <jorg@example.de>
To: me@example.com
Subject: =?utf-8?b?R3LDvMOfZSBhdXMgQmVybGlu?=
Content-Type: text/plain; charset=utf-8`, 'Schöne Grüße\r\n');
const MULTIPART = msg(`From: shop@example.com
To: me@example.com
Subject: Your invoice
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b1"`, '--b1\r\nContent-Type: text/plain\r\n\r\nInvoice number 42 attached\r\n--b1\r\nContent-Type: text/html\r\n\r\n<p>Invoice <b>number</b> 42</p>\r\n--b1--\r\n');

export const CASES: CompareCase[] = [
  { name: 'empty script: implicit keep', script: '', message: PLAIN },
  { name: 'keep', script: 'keep;', message: PLAIN },
  { name: 'discard', script: 'discard;', message: PLAIN },
  { name: 'fileinto on subject', script: 'require "fileinto";\nif header :contains "subject" "report" { fileinto "Reports"; }', message: PLAIN },
  { name: 'fileinto not matching', script: 'require "fileinto";\nif header :contains "subject" "invoice" { fileinto "Bills"; }', message: PLAIN },
  { name: 'address :domain', script: 'require "fileinto";\nif address :domain :is "from" "example.org" { fileinto "Org"; stop; }\nkeep;', message: PLAIN },
  { name: 'subaddress :detail', script: 'require ["fileinto", "subaddress"];\nif address :detail "to" "lists" { fileinto "Lists"; }', message: PLAIN },
  { name: 'envelope :user', script: 'require ["fileinto", "envelope", "subaddress"];\nif envelope :user "to" "me" { fileinto "Me"; }', message: PLAIN, to: 'me+x@example.com' },
  { name: 'redirect', script: 'redirect "archive@example.net";', message: PLAIN },
  { name: 'redirect :copy keeps', script: 'require "copy";\nredirect :copy "archive@example.net";', message: PLAIN },
  { name: 'reject', script: 'require "reject";\nif header :contains "subject" "numbers" { reject "No numbers please"; }', message: PLAIN },
  { name: 'imap4flags on implicit keep', script: 'require "imap4flags";\naddflag ["\\\\Flagged", "$Report"];', message: PLAIN },
  { name: 'fileinto :flags', script: 'require ["fileinto", "imap4flags"];\nfileinto :flags "\\\\Seen" "Read";', message: PLAIN },
  { name: 'mailing list by List-Id', script: 'require "fileinto";\nif exists "list-id" { fileinto "Lists"; } else { keep; }', message: LIST },
  { name: 'matches and variables', script: 'require ["fileinto", "variables"];\nif header :matches "List-Id" "<*.lists.example.org>" { fileinto "Lists/${1}"; }', message: LIST },
  { name: 'encoded subject', script: 'require "fileinto";\nif header :contains "subject" "Berlin" { fileinto "Berlin"; }', message: ENCODED },
  { name: 'encoded from name', script: 'require "fileinto";\nif header :contains "from" "Jörg" { fileinto "Jorg"; }', message: ENCODED },
  { name: 'body :text', script: 'require ["body", "fileinto"];\nif body :text :contains "invoice number" { fileinto "Bills"; }', message: MULTIPART },
  { name: 'size :over', script: 'require "fileinto";\nif size :over 100 { fileinto "Big"; }', message: PLAIN },
  { name: 'relational count', script: 'require ["relational", "comparator-i;ascii-numeric", "fileinto"];\nif address :count "ge" :comparator "i;ascii-numeric" ["to", "cc"] "2" { fileinto "Group"; }', message: PLAIN },
  { name: 'relational value', script: 'require ["relational", "comparator-i;ascii-numeric", "fileinto"];\nif header :value "lt" :comparator "i;ascii-numeric" "x-priority" "4" { fileinto "Prio"; }', message: PLAIN },
  { name: 'date year', script: 'require ["date", "fileinto"];\nif date :originalzone :is "date" "year" "2025" { fileinto "2025"; }', message: PLAIN },
  { name: 'vacation', script: 'require "vacation";\nvacation :days 3 "I am away";', message: PLAIN },
  { name: 'anyof/allof/not', script: 'require "fileinto";\nif anyof (not exists "x-none", allof (true, false)) { fileinto "A"; } elsif true { fileinto "B"; }', message: PLAIN },
  { name: 'mailbox :create', script: 'require ["fileinto", "mailbox"];\nfileinto :create "New/Folder";', message: PLAIN },
];
