// Which Pigeonhole svtest files cover what we offer, grouped as the conformance report lists them.
// Files that test an extension we do not offer (regex, virustest, include, ...) are left out.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const GROUPS: Record<string, string[]> = {
  base: ['test-*.svtest', 'control-*.svtest', 'lexer.svtest', 'testsuite.svtest', 'match-types/*.svtest', 'comparators/*.svtest'],
  envelope: ['extensions/envelope.svtest'],
  'encoded-character': ['extensions/encoded-character.svtest'],
  imap4flags: ['extensions/imap4flags/*.svtest'],
  vacation: ['extensions/vacation/*.svtest'],
  variables: ['extensions/variables/*.svtest', '!extensions/variables/regex.svtest'],
  body: ['extensions/body/*.svtest'],
  relational: ['extensions/relational/*.svtest'],
  mailbox: ['extensions/mailbox/*.svtest'],
  reject: ['extensions/reject/*.svtest'],
  index: ['extensions/index/*.svtest'],
  subaddress: ['extensions/subaddress/*.svtest'],
  date: ['extensions/date/*.svtest'],
  spamtest: ['extensions/spamvirustest/spamtest.svtest', 'extensions/spamvirustest/spamtestplus.svtest', 'extensions/spamvirustest/errors.svtest'],
};

function expand(root: string, pattern: string): string[] {
  const slash = pattern.lastIndexOf('/');
  const dir = slash < 0 ? '' : pattern.slice(0, slash);
  const glob = pattern.slice(slash + 1);
  const re = new RegExp('^' + glob.replace(/[.]/g, '\\.').replace(/\*/g, '.*') + '$');
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full).filter((f) => re.test(f)).sort().map((f) => join(dir, f));
}

/** The files of each group, relative to the tests/ folder. */
export function groupFiles(testsRoot: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [group, patterns] of Object.entries(GROUPS)) {
    const excluded = new Set(patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
    out[group] = patterns.filter((p) => !p.startsWith('!')).flatMap((p) => expand(testsRoot, p)).filter((f) => !excluded.has(f));
  }
  return out;
}
