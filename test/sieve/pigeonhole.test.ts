// Pigeonhole's Sieve test suite (../shared/tools/pigeonhole-tests, LGPL test data, unpacked here into a
// temporary folder, never copied into the project) run through the test-only vnd.dovecot.testsuite harness
// over our interpreter. Reports pass counts per extension; docs/SIEVE-CONFORMANCE.md lists what fails and why.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupFiles } from './harness/files.js';
import { runSvtest } from './harness/testsuite.js';

// The project's shared folder beside the checkout; a clone made elsewhere (CI, /tmp) finds it where the work area keeps it.
const SUITE = 'tools/pigeonhole-tests/pigeonhole-0.5.19-tests.tar.gz';
const TARBALL = [new URL(`../../../shared/${SUITE}`, import.meta.url).pathname, `/work/shared/${SUITE}`, `/check/work/shared/${SUITE}`]
  .find((p) => existsSync(p)) ?? new URL(`../../../shared/${SUITE}`, import.meta.url).pathname;
/** The overall pass rate reached (docs/SIEVE-CONFORMANCE.md); a change that lowers it fails here. */
const MINIMUM_RATE = 0.96;

test('Pigeonhole svtest files of the base language and every offered extension pass at the documented rate', (t) => {
  t.true(existsSync(TARBALL), `the test suite is at ${TARBALL}`);
  const dir = mkdtempSync(join(tmpdir(), 'pigeonhole-'));
  try {
    execFileSync('tar', ['xzf', TARBALL, '-C', dir]);
    const root = join(dir, 'tests');
    let passed = 0;
    let total = 0;
    for (const [group, files] of Object.entries(groupFiles(root))) {
      t.true(files.length > 0, `${group} has files`);
      let groupPassed = 0;
      let groupTotal = 0;
      for (const file of files) {
        const outcome = runSvtest(join(root, file));
        groupPassed += outcome.tests.filter((x) => x.passed).length;
        groupTotal += outcome.tests.length;
      }
      t.log(`${group}: ${groupPassed}/${groupTotal} (${files.length} files)`);
      passed += groupPassed;
      total += groupTotal;
    }
    const rate = passed / total;
    t.log(`overall: ${passed}/${total} = ${(rate * 100).toFixed(1)} %`);
    t.true(total > 300, 'the files hold the expected number of tests');
    t.true(rate >= MINIMUM_RATE, `pass rate ${(rate * 100).toFixed(1)} % >= ${MINIMUM_RATE * 100} %`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
