import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, tempDir } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';
import { runCli } from '../helpers/process.js';

test('mailstead import --mbox and mailstead export: through the running server\'s API, the file comes back byte for byte', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const dir = tempDir(t, 'mailstead-cli-import-');
  const mbox = join(dir, 'in.mbox');
  const text = Array.from({ length: 5 }, (_, i) =>
    `From MAILER-DAEMON Fri Mar  1 10:0${i}:00 2024\nMessage-ID: <cli${i}@old.example>\nSubject: cli ${i}\n\n>From escaped\nbody ${i}\n\n`).join('');
  writeFileSync(mbox, text);
  const url = `http://127.0.0.1:${app.httpPort}`;
  const env = { MAILSTEAD_API_KEY: box.key };

  const imported = await runCli(app.dataDir, ['import', box.address, '--mbox', mbox, '--folder', 'Moved', '--url', url], env);
  t.is(imported.code, 0, imported.stderr);
  t.like(JSON.parse(imported.stdout), { status: 'completed', messages_imported: 5 });
  t.regex(imported.stderr, /5 imported, 0 skipped of 5/);

  const out = join(dir, 'out.mbox');
  const exported = await runCli(app.dataDir, ['export', box.address, '--format', 'mbox', '--folder', 'Moved', '--out', out, '--url', url], env);
  t.is(exported.code, 0, exported.stderr);
  t.is(readFileSync(out, 'utf8'), text);

  const tar = join(dir, 'out.tar');
  t.is((await runCli(app.dataDir, ['export', box.address, '--format', 'maildir', '--out', tar, '--url', url], env)).code, 0);
  t.true(readFileSync(tar).includes('.Moved/cur/'));

  const noKey = await runCli(app.dataDir, ['import', box.address, '--mbox', mbox, '--url', url]);
  t.is(noKey.code, 2);
  t.regex(noKey.stderr, /--key KEY/);
  const failed = await runCli(app.dataDir, ['import', box.address, '--imap', '127.0.0.1', '--user', 'u', '--url', url], { ...env, MAILSTEAD_IMPORT_PASSWORD: 'p' });
  t.is(failed.code, 1);
  t.regex(failed.stderr, /public hosts only/);
});
