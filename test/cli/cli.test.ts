import test from 'ava';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { startTestApp, tempDir } from '../helpers/app.js';
import { runCli } from '../helpers/process.js';

test('the CLI creates tenants and keys that the running server accepts at once', async (t) => {
  const app = await startTestApp(t);
  const created = await runCli(app.dataDir, ['tenant', 'create', 'acme', '--plan', 'active']);
  t.is(created.code, 0, created.stderr);
  t.regex(created.stdout, /^\d+\n$/);
  const key = await runCli(app.dataDir, ['key', 'create', '--tenant', 'acme', '--perms', 'read,write']);
  t.is(key.code, 0, key.stderr);
  t.regex(key.stdout, /^[A-Za-z0-9]{32}\n$/);
  const k = key.stdout.trim();
  t.is((await app.post('/v1/create/domain', k, { Domain: 'cli.example' })).status, 200);

  t.is((await runCli(app.dataDir, ['plan', 'set', 'acme', 'none'])).code, 0);
  t.is((await app.post('/v1/create/domain', k, { Domain: 'cli2.example' })).status, 403);
  t.is((await runCli(app.dataDir, ['plan', 'set', 'acme', 'active'])).code, 0);
  t.is((await app.post('/v1/create/domain', k, { Domain: 'cli2.example' })).status, 200);

  const revoked = await runCli(app.dataDir, ['key', 'revoke', k]);
  t.is(revoked.code, 0, revoked.stderr);
  t.is((await app.get('/v1/list/domain', k)).status, 401);

  const admin = await runCli(app.dataDir, ['tenant', 'create', 'root', '--admin']);
  t.is(admin.code, 0);
  const adminKey = (await runCli(app.dataDir, ['key', 'create', '--tenant', 'root', '--perms', 'write'])).stdout.trim();
  t.is((await app.post('/v1/create/domain', adminKey, { Domain: 'admin.example' })).status, 200, 'admin needs no plan');
});

test('the CLI takes an online backup that is a complete database', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await app.domain(key, 'backup.example');
  const file = join(tempDir(t), 'copy.db');
  const r = await runCli(app.dataDir, ['backup', file]);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout.trim(), file);
  const copy = new BetterSqlite3(file, { readonly: true });
  t.teardown(() => copy.close());
  t.deepEqual(copy.prepare('SELECT hostname FROM domains').all(), [{ hostname: 'backup.example' }]);
  t.is((copy.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
});

test('bad arguments print a message on stderr and exit 2', async (t) => {
  const dir = tempDir(t);
  await runCli(dir, ['tenant', 'create', 'exists']);
  const cases = [
    [], ['frobnicate'], ['tenant'], ['tenant', 'create'], ['tenant', 'create', 'a', 'b'],
    ['tenant', 'create', 'x', '--plan', 'gold'], ['tenant', 'create', 'x', '--bogus'],
    ['key', 'create', '--perms', 'read'], ['key', 'create', '--tenant', 'exists'],
    ['key', 'create', '--tenant', 'exists', '--perms', 'read,fly'], ['key', 'create', '--tenant', 'nobody', '--perms', 'read'],
    ['key', 'revoke'], ['key', 'revoke', 'not-a-key'], ['plan', 'set', 'exists'], ['plan', 'set', 'exists', 'maybe'],
    ['plan', 'set', 'nobody', 'active'], ['backup'], ['tenant', 'create', 'exists'],
    ['backup', join(dir, 'no-such-folder', 'copy.db')], ['backup', dir],
  ];
  for (const args of cases) {
    const r = await runCli(dir, args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.is(r.stdout, '', args.join(' '));
    t.regex(r.stderr, /mailstead: .+/);
  }
});
