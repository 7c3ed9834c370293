import test from 'ava';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPgTool, requirePgTool } from '../../src/backup/pg-tools.js';
import { startTestApp, tempDir, type TestClient } from '../helpers/app.js';
import { waitForEmails } from '../helpers/emails.js';
import { createMailbox, domain } from '../helpers/mailboxes.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { runCli } from '../helpers/process.js';
import { sendMail } from '../helpers/smtp.js';

/** The CLI's environment for a server's database: its URL on PostgreSQL, nothing more on SQLite. */
const dbEnv = (app: TestClient): Record<string, string> => (app.config.databaseUrl ? { MAILSTEAD_DATABASE_URL: app.config.databaseUrl } : {});

const message = (to: string, n: number) => [
  'From: Ann Sender <ann@sender.example>', `To: ${to}`, `Subject: kept through a restore ${n}`,
  `Message-ID: <restore${n}.${process.pid}@sender.example>`, 'Date: Mon, 01 Jan 2024 12:00:00 +0000', '', `Body number ${n}, byte for byte.`, '',
].join('\r\n');

test('a backup taken while the server runs restores into a fresh database that serves the same mail and key', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'restore.example');
  t.is((await createMailbox(app, key, 'restore.example', 'ann@restore.example', 'correct horse')).body.status, 'completed');
  for (let n = 1; n <= 3; n++) {
    const sent = await sendMail(app.smtpPort, { from: 'ann@sender.example', to: ['ann@restore.example'] }, message('ann@restore.example', n));
    t.deepEqual(sent.accepted, ['ann@restore.example']);
  }
  const before = await waitForEmails(app, key, 3);

  // Online: the server keeps running (and serving) while the backup is taken.
  const file = join(tempDir(t), onPostgres ? 'mailstead.dump' : 'mailstead.db');
  const backup = await runCli(app.dataDir, ['backup', file], dbEnv(app));
  t.is(backup.code, 0, backup.stderr);
  t.is(backup.stdout.trim(), file);
  t.is((await app.get('/v1/emails?per_page=100', key)).status, 200);

  // Restore into a new data dir (and, on PostgreSQL, a new empty database).
  const fresh = tempDir(t);
  const target: Record<string, string> = onPostgres ? { MAILSTEAD_DATABASE_URL: await freshPostgresDatabase(t) } : {};
  const restored = await runCli(fresh, ['restore', file], target);
  t.is(restored.code, 0, restored.stderr);
  if (!onPostgres) {
    // The files beside the SQLite database, as the README's recipe copies them after the backup.
    for (const name of ['blobs', 'raw', 'journal', 'install.secret']) {
      if (existsSync(join(app.dataDir, name))) cpSync(join(app.dataDir, name), join(fresh, name), { recursive: true });
    }
  }
  // A second restore onto what is there now is refused without --force.
  const again = await runCli(fresh, ['restore', file], target);
  t.is(again.code, 1);
  t.regex(again.stderr, /--force/);
  // With --force (no server on it), it replaces what is there.
  const forced = await runCli(fresh, ['restore', file, '--force'], target);
  t.is(forced.code, 0, forced.stderr);

  const copy = await startTestApp(t, { dataDir: fresh, env: target });
  const after = await waitForEmails(copy, key, 3);
  t.deepEqual(after.map((e: any) => [e.id, e.subject, e.message_id]), before.map((e: any) => [e.id, e.subject, e.message_id]));
  for (const e of after) {
    const one = await copy.get(`/v1/emails/${e.id}`, key);
    t.is(one.status, 200);
    t.regex(JSON.stringify(one.body), /Body number \d, byte for byte\./);
  }
  // The restored server takes new mail too.
  await sendMail(copy.smtpPort, { from: 'ann@sender.example', to: ['ann@restore.example'] }, message('ann@restore.example', 4));
  t.is((await waitForEmails(copy, key, 4)).length, 4);
});

test('restore refuses a database a running server has open, and a file that is not a backup', async (t) => {
  const app = await startTestApp(t);
  const file = join(tempDir(t), 'copy');
  t.is((await runCli(app.dataDir, ['backup', file], dbEnv(app))).code, 0);
  // On SQLite the running server's database is refused even with --force; on PostgreSQL a database
  // with tables is refused without it.
  const busy = await runCli(app.dataDir, ['restore', file, ...(onPostgres ? [] : ['--force'])], dbEnv(app));
  t.is(busy.code, 1);
  t.regex(busy.stderr, onPostgres ? /not empty/ : /in use: stop the server/);
  t.is((await app.get('/v1/emails', await app.keyFor())).status, 200, 'the server is untouched');

  const junk = join(tempDir(t), 'junk');
  writeFileSync(junk, 'not a backup at all\n');
  const target: Record<string, string> = onPostgres ? { MAILSTEAD_DATABASE_URL: await freshPostgresDatabase(t) } : {};
  const bad = await runCli(tempDir(t), ['restore', junk], target);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /mailstead: .+/);
  t.is((await runCli(tempDir(t), ['restore'], target)).code, 2);
  t.is((await runCli(tempDir(t), ['backup', file, '--force'], target)).code, 2);
});

test('pg_dump is looked for on PATH and in /usr/lib/postgresql/*/bin, or found nowhere', (t) => {
  t.is(findPgTool('pg_dump', { path: '', root: join(tempDir(t), 'none') }), null);
  const root = tempDir(t);
  for (const v of ['13', '16']) {
    const bin = join(root, v, 'bin');
    cpSync(process.execPath, join(bin, 'pg_dump'));
  }
  t.is(findPgTool('pg_dump', { path: '', root }), join(root, '16', 'bin', 'pg_dump'));
});

test('without pg_dump, the error names it, where it was looked for and what to install', (t) => {
  const root = join(tempDir(t), 'none');
  const err = t.throws(() => requirePgTool('pg_dump', { path: '', root }));
  t.is(err.message, `pg_dump was not found on PATH nor in ${root}/*/bin; install the PostgreSQL client programs (e.g. the postgresql-client package) of the server's major version or newer`);
});
