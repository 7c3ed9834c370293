import test from 'ava';
import { eventually, startNodes, type TestNode } from '../helpers/nodes.js';
import { runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/app.js';

// On PostgreSQL each node keeps the API key rows it authenticated with while the directory's change
// count stands still (tenants/service.ts authenticate); a revocation or plan change committed
// anywhere, here by the CLI, NOTIFYs every node (migration 017), which then reads the row again.

/** Far longer than a NOTIFY takes on a loaded 2-core host; a kept row nobody invalidates would never change. */
const SEEN_WITHIN_MS = 10_000;

/** Polls `node` until `check` holds for its answer to `ask`; resolves with the time it took. */
async function becomes(node: TestNode, what: string, ask: () => Promise<number>, status: number): Promise<number> {
  const started = Date.now();
  await eventually(`${what} on ${node.name} answered ${status}`, async () => ((await ask()) === status ? true : undefined), SEEN_WITHIN_MS, 20);
  return Date.now() - started;
}

test.serial('a key revoked and a plan turned off by the CLI are refused on every node, which had the key rows kept', async (t) => {
  t.timeout(180_000);
  const { cluster, nodes } = await startNodes(t, 2);
  const tenant = `keys${process.pid}`;
  const key = await cluster.tenantKey(tenant);
  const cli = (args: string[]) => runCli(tempDir(t), args, { MAILSTEAD_DATABASE_URL: cluster.url });
  const second = await cli(['key', 'create', '--tenant', tenant, '--perms', 'read,write']);
  t.is(second.code, 0, second.stderr);
  const other = second.stdout.trim();
  // Read (and kept) on both nodes, several times each.
  for (let i = 0; i < 3; i++) for (const n of nodes) for (const k of [key, other]) t.is((await n.get('/v1/list/domain', k)).status, 200);

  const revoked = await cli(['key', 'revoke', key]);
  t.is(revoked.code, 0, revoked.stderr);
  for (const n of nodes) {
    const ms = await becomes(n, 'the revoked key', async () => (await n.get('/v1/list/domain', key)).status, 401);
    t.log(`${n.name} refused the revoked key after ${ms} ms`);
  }
  for (const n of nodes) t.is((await n.get('/v1/list/domain', other)).status, 200, 'the tenant\'s other key still works');

  t.is((await cli(['plan', 'set', tenant, 'none'])).code, 0);
  let seq = 0;
  for (const n of nodes) {
    const ms = await becomes(n, 'a write without a plan', async () => (await n.post('/v1/create/domain', other, { Domain: `plan${++seq}.keys.test` })).status, 403);
    t.log(`${n.name} refused a write without a plan after ${ms} ms`);
  }
  t.is((await cli(['plan', 'set', tenant, 'active'])).code, 0);
  for (const n of nodes) await becomes(n, 'a write with the plan back', async () => (await n.post('/v1/create/domain', other, { Domain: `back${++seq}.keys.test` })).status, 200);
});
