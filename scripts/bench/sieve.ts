// Sieve cost at delivery (issue 48): a 50-rule script parsed once, run on a typical 5 KB message many times;
// prints one JSON line with the per-message p50/p99 in milliseconds (target: p99 <= 0.5 ms), and, when
// Dovecot's sieve-test is installed, its per-run time for reference (a whole process per run, so not like
// for like). Run: npx tsx scripts/bench/sieve.ts [runs]
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseSieve, runSieve } from '../../src/sieve/index.js';

const RUNS = Number(process.argv[2] ?? 5000);

function fiftyRules(): string {
  const rules = ['require ["fileinto", "imap4flags", "variables", "subaddress", "envelope", "relational", "comparator-i;ascii-numeric", "body", "date", "spamtest"];'];
  for (let i = 0; i < 50; i++) {
    switch (i % 10) {
      case 0: rules.push(`if header :contains "subject" "project-${i}" { fileinto "Projects/${i}"; stop; }`); break;
      case 1: rules.push(`if address :domain :is "from" "vendor${i}.example" { fileinto "Vendors"; stop; }`); break;
      case 2: rules.push(`if header :matches "list-id" "*<team${i}.*>*" { fileinto "Lists/\${2}"; stop; }`); break;
      case 3: rules.push(`if address :detail "to" "tag${i}" { addflag "$Tag${i}"; }`); break;
      case 4: rules.push(`if envelope :domain :is "from" "bulk${i}.example" { discard; stop; }`); break;
      case 5: rules.push(`if header :value "gt" :comparator "i;ascii-numeric" "x-priority" "${i}" { addflag "\\\\Flagged"; }`); break;
      case 6: rules.push(`if anyof (header :is "x-mailer" "bot${i}", exists "x-campaign-${i}") { fileinto "Bots"; stop; }`); break;
      case 7: rules.push(`if spamtest :value "ge" :comparator "i;ascii-numeric" "${(i % 9) + 2}" { fileinto "Junk"; stop; }`); break;
      case 8: rules.push(`if date :is "date" "year" "19${i}" { fileinto "Old"; stop; }`); break;
      case 9: rules.push(`if body :contains "unsubscribe-${i}" { fileinto "Newsletters"; stop; }`); break;
    }
  }
  rules.push('if header :contains "subject" "invoice" { fileinto "Bills"; }');
  return rules.join('\n') + '\n';
}

function fiveKbMessage(): Buffer {
  const headers = [
    'Return-Path: <alice@example.org>',
    'Received: from mx.example.org (mx.example.org [192.0.2.1]) by mail.example.com; Tue, 1 Apr 2025 09:06:31 +0000',
    'From: Alice Example <alice@example.org>', 'To: Bob <bob+work@example.com>', 'Cc: team@example.com',
    'Subject: Re: the quarterly numbers', 'Date: Tue, 1 Apr 2025 09:06:20 +0000', 'Message-ID: <abc123@example.org>',
    'X-Priority: 3', 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8',
  ];
  const line = 'The numbers for this quarter look fine; see the attached sheet for the details by region.\r\n';
  const body = line.repeat(Math.ceil((5 * 1024 - headers.join('\r\n').length) / line.length));
  return Buffer.from(headers.join('\r\n') + '\r\n\r\n' + body);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const script = fiftyRules();
if (process.env.SIEVE_BENCH_DUMP) writeFileSync(process.env.SIEVE_BENCH_DUMP, script);
const raw = fiveKbMessage();
const parseStart = performance.now();
const parsed = parseSieve(script);
const parseMs = performance.now() - parseStart;
if (!parsed.ok) throw new Error(parsed.error.message);
const input = {
  raw, envelope: { from: 'alice@example.org', to: 'bob+work@example.com' }, spam: { score: 1.2, threshold: 5, verdict: 'ham' as const },
  mailboxAddress: 'bob@example.com', now: new Date(), folderExists: () => true,
};
for (let i = 0; i < 200; i++) runSieve(parsed.script, input); // warm-up
const times: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const out = runSieve(parsed.script, input);
  times.push(performance.now() - t0);
  if (out.error) throw new Error(out.error.message);
}
times.sort((a, b) => a - b);

let sieveTestMs: number | null = null;
if (existsSync('/usr/bin/sieve-test')) {
  const dir = mkdtempSync(join(tmpdir(), 'sieve-bench-'));
  chmodSync(dir, 0o777);
  try {
    // spamtest is off in Debian's default configuration; the plugin block turns it on for the script to compile.
    writeFileSync(join(dir, 'dovecot.conf'), `mail_uid = nobody\nmail_gid = nogroup\nmail_location = maildir:${dir}/mail\nmail_home = ${dir}/mail\n` +
      'plugin {\n  sieve_extensions = +spamtest +spamtestplus\n  sieve_spamtest_status_type = score\n' +
      '  sieve_spamtest_status_header = X-Spam-Score\n  sieve_spamtest_max_value = 5\n}\n');
    writeFileSync(join(dir, 's.sieve'), script);
    writeFileSync(join(dir, 'm.eml'), raw);
    chmodSync(join(dir, 's.sieve'), 0o666);
    chmodSync(join(dir, 'm.eml'), 0o666);
    const runs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      execFileSync('sieve-test', ['-c', join(dir, 'dovecot.conf'), join(dir, 's.sieve'), join(dir, 'm.eml')], { stdio: 'ignore' });
      runs.push(performance.now() - t0);
    }
    runs.sort((a, b) => a - b);
    sieveTestMs = Number(runs[5].toFixed(2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(JSON.stringify({
  bench: 'sieve', rules: 50, message_bytes: raw.length, runs: RUNS, parse_ms: Number(parseMs.toFixed(3)),
  run_p50_ms: Number(percentile(times, 50).toFixed(4)), run_p95_ms: Number(percentile(times, 95).toFixed(4)), run_p99_ms: Number(percentile(times, 99).toFixed(4)),
  target_p99_ms: 0.5, sieve_test_process_p50_ms: sieveTestMs,
}));
