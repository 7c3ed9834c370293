/**
 * The Sieve engine's CPU per message, an earlier revision against the working tree, in one process
 * (alternating rounds of 5,000 runs, the first round unmeasured): the 50-rule script of
 * sieve-delivery.ts on a ~5 KB message that matches no rule. CPU time (process.cpuUsage), so a
 * loaded host changes it less than a rate.
 *
 * Usage: git archive REV src/sieve | tar -x -C .base-src && node --import tsx scripts/bench/sieve-engine-ab.ts [.base-src]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as after from '../../src/sieve/index.js';

const base = await import(pathToFileURL(resolve(process.argv[2] ?? '.base-src', 'src/sieve/index.ts')).href);
const SCRIPT = ['require ["fileinto", "imap4flags", "envelope", "mailbox"];',
  ...Array.from({ length: 50 }, (_, i) => `if anyof (header :contains "subject" "rule-${i}-nomatch", address :is "from" "nobody${i}@nowhere.example") { fileinto :create "Rule${i}"; stop; }`),
].join('\n');
const raw = Buffer.from(`From: Bench Sender <sender@bench.example>\r\nTo: <rcpt@bench.example>\r\nSubject: bench message 1234\r\nMessage-ID: <x@y>\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\n${'lorem ipsum '.repeat(400)}\r\n`);
const input = { raw, envelope: { from: 'sender@bench.example', to: 'rcpt@bench.example' }, mailboxAddress: 'rcpt@bench.example', now: new Date(), spam: null, folderExists: () => true };
const engines = { base, after } as Record<string, any>;
const scripts: Record<string, any> = {};
for (const [k, e] of Object.entries(engines)) { const r = e.parseSieve(SCRIPT); if (!r.ok) throw new Error(k); scripts[k] = r.script; }
const res: Record<string, number[]> = { base: [], after: [] };
for (let round = 0; round < 7; round++) for (const k of ['base', 'after']) {
  const n = 5000; const t = process.cpuUsage();
  for (let i = 0; i < n; i++) engines[k].runSieve(scripts[k], input);
  const u = process.cpuUsage(t); if (round > 0) res[k].push((u.user + u.system) / n);
}
const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ runSieve_cpu_us_per_msg: { base: res.base.map((x) => Math.round(x)), after: res.after.map((x) => Math.round(x)) }, median: { base: Math.round(med(res.base)), after: Math.round(med(res.after)) } }));
