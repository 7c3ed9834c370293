import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { runCli, startServerProcess } from '../helpers/process.js';

test('the CLI and the server may start on a new data dir at the same moment', async (t) => {
  const dir = tempDir(t);
  const [server, tenant, other] = await Promise.all([
    startServerProcess(dir),
    runCli(dir, ['tenant', 'create', 'first', '--plan', 'active']),
    runCli(dir, ['tenant', 'create', 'second']),
  ]);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  t.is(tenant.code, 0, tenant.stderr);
  t.is(other.code, 0, other.stderr);
  const key = await runCli(dir, ['key', 'create', '--tenant', 'first', '--perms', 'read']);
  t.is(key.code, 0, key.stderr);
  const res = await fetch(`http://127.0.0.1:${server.httpPort}/api/v1/list/domain`, { headers: { 'x-api-key': key.stdout.trim() } });
  t.is(res.status, 200);
});
