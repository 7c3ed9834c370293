// Dovecot's imaptest (MIT; ../shared/tools/imaptest: its source, a build script and a runner of its
// scripted tests), the IMAP community's own conformance check, run against the real server: every
// scripted test of a capability we advertise passes, and at least 60 of its 71 do (issue 46).
// Built once per machine from Debian packages by the tool's build.sh (dovecot-dev and a C toolchain,
// installed by .ci/run); the figures beside Dovecot and the stress runs are scripts/imaptest.ts's.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/app.js';
import { imapApp, PASSWORD } from '../helpers/imap.js';

const run = promisify(execFile);

// The project's shared folder beside the checkout; a clone made elsewhere (CI, /tmp) finds it where the work area keeps it.
const TOOLS = [new URL('../../../shared/tools/imaptest', import.meta.url).pathname, '/work/shared/tools/imaptest', '/check/work/shared/tools/imaptest']
  .find((p) => existsSync(join(p, 'build.sh'))) ?? new URL('../../../shared/tools/imaptest', import.meta.url).pathname;

/** What our server does not advertise (imaptest skips their scripts): CATENATE, NOTIFY, URLAUTH, CONTEXT=SORT. */
const NOT_OFFERED = ['catenate', 'catenate-multiappend', 'notify', 'sort-partial', 'urlauth', 'urlauth-binary', 'urlauth2'];

test('imaptest: every scripted test of an advertised capability passes, at least 60 of 71', async (t) => {
  t.timeout(900_000);
  // build.sh prints the binary's path last; it reuses a binary already built in that folder.
  const built = await run(join(TOOLS, 'build.sh'), [join(tmpdir(), 'imaptest')], { maxBuffer: 64 * 1024 * 1024 });
  const bin = built.stdout.trim().split('\n').pop()!;
  t.true(existsSync(bin), `imaptest built at ${bin}`);

  // imaptest's two users: the scripts log in as both with one password, and make and delete their own folders.
  const { box, imapPort } = await imapApp(t, { count: 2 });
  const out = tempDir(t, 'mailstead-imaptest-');
  const args = [bin, out, 'host=127.0.0.1', `port=${imapPort}`, 'ssl=any-cert', `user=${box.mailboxes[0].address}`, `user2=${box.mailboxes[1].address}`, `pass=${PASSWORD}`];
  const { stdout } = await run(join(TOOLS, 'run-scripts.sh'), args, { maxBuffer: 16 * 1024 * 1024, timeout: 840_000 });

  const lines = stdout.split('\n').map((l) => l.trim().split(/\s+/)).filter((w) => w.length >= 2 && /^(PASS|FAIL|SKIP|TIMEOUT|ERROR)/.test(w[1]));
  const byStatus = (s: RegExp) => lines.filter((w) => s.test(w[1])).map((w) => w[0]).sort();
  t.deepEqual(byStatus(/^(FAIL|TIMEOUT|ERROR)/), [], `failing scripts (protocol logs in ${out})`);
  t.deepEqual(byStatus(/^SKIP/), NOT_OFFERED, 'only the scripts of capabilities we do not advertise are skipped');
  t.true(byStatus(/^PASS/).length >= 60, stdout.split('\n').pop());
  t.is(lines.length, 71);
});
