// Our engine against Dovecot Pigeonhole's `sieve-test` (Debian's dovecot-sieve, installed by .ci/run):
// each script runs on its message through both, and the actions taken must be the same.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSieve, runSieve, type SieveAction } from '../../src/sieve/index.js';
import { CASES } from './compare-cases.js';

/** One action as text: "store FOLDER flags", "redirect ADDRESS", "reject", "discard", "vacation". */
function ours(actions: SieveAction[]): string[] {
  return actions.map((a) => {
    switch (a.type) {
      case 'keep': return `store INBOX ${a.flags.map((f) => f.toLowerCase()).sort().join(' ')}`.trim();
      case 'fileinto': return `store ${a.folder} ${a.flags.map((f) => f.toLowerCase()).sort().join(' ')}`.trim();
      case 'redirect': return `redirect ${a.address}`;
      case 'reject': return 'reject';
      case 'discard': return 'discard';
      case 'vacation': return 'vacation';
    }
  }).filter((a) => a !== 'discard').sort();
}

/** The same from sieve-test's "Performed actions" and "Implicit keep" sections. */
function theirs(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split('\n')) {
    const action = /^ \* (.*)$/.exec(line);
    if (action) {
      const text = action[1];
      let m: RegExpExecArray | null;
      if ((m = /^store message in folder: (.*)$/.exec(text))) out.push(`store ${m[1]}`);
      else if ((m = /^redirect message to: <?([^>]*)>?$/.exec(text))) out.push(`redirect ${m[1]}`);
      else if (text.startsWith('reject')) out.push('reject');
      else if (text.startsWith('send vacation')) out.push('vacation');
      else if (text !== 'discard') out.push(text);
      continue;
    }
    const flags = /^\s+\+ add IMAP flags: (.*)$/.exec(line);
    if (flags && out.length) out[out.length - 1] += ' ' + flags[1].toLowerCase().split(/\s+/).sort().join(' ');
  }
  return out.sort();
}

test('sieve-test and our engine take the same actions on each script and message', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sieve-compare-'));
  // sieve-test drops privileges to the mail user; the folder must be its to read and write.
  chmodSync(dir, 0o777);
  try {
    writeFileSync(join(dir, 'dovecot.conf'), `mail_uid = nobody\nmail_gid = nogroup\nmail_location = maildir:${dir}/mail\nmail_home = ${dir}/mail\n`);
    t.true(CASES.length >= 20);
    for (const [i, c] of CASES.entries()) {
      const script = join(dir, `case${i}.sieve`);
      const message = join(dir, `case${i}.eml`);
      writeFileSync(script, c.script);
      writeFileSync(message, c.message);
      chmodSync(script, 0o666);
      chmodSync(message, 0o666);
      const args = ['-c', join(dir, 'dovecot.conf'), ...(c.from ? ['-f', c.from] : []), ...(c.to ? ['-a', c.to] : []), script, message];
      const output = execFileSync('sieve-test', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const parsed = parseSieve(c.script);
      if (!parsed.ok) { t.fail(`${c.name}: ${parsed.error.message}`); continue; }
      const outcome = runSieve(parsed.script, {
        raw: Buffer.from(c.message), envelope: { from: c.from ?? 'sender@example.org', to: c.to ?? 'recipient@example.com' },
        spam: null, mailboxAddress: c.to ?? 'recipient@example.com', now: new Date(), folderExists: () => true,
      });
      t.is(outcome.error, undefined, c.name);
      t.deepEqual(ours(outcome.actions), theirs(output), c.name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
