import test from 'ava';
import { CHECK_KIND } from '../../src/dns/store.js';
import { eventually, startNodes } from '../helpers/nodes.js';

// Two server processes on one PostgreSQL database (DECISIONS.md section 17): cron work.

/** The `cron tick` log lines of a job in a node's output (debug level). */
function ticks(output: string, job: string): Array<'ran' | 'skipped'> {
  const out: Array<'ran' | 'skipped'> = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"cron tick"')) continue;
    try {
      const j = JSON.parse(line);
      if (j.job === job) out.push(j.outcome);
    } catch { /* a partial line */ }
  }
  return out;
}

/** When each `cron tick` line of a job was logged (pino's time, ms since the epoch). */
function tickTimes(output: string, job: string): number[] {
  const out: number[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"cron tick"')) continue;
    try {
      const j = JSON.parse(line);
      if (j.job === job) out.push(j.time);
    } catch { /* a partial line */ }
  }
  return out;
}

test.serial('the DNS scheduler (dns.checks, every minute) runs on one node per tick: each due domain gets one check', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2, { MAILSTEAD_LOG_LEVEL: 'debug' });
  const key = await cluster.tenantKey();
  const hosts = ['one.example', 'two.example', 'three.example'];
  for (const [i, host] of hosts.entries()) {
    const node = i % 2 === 0 ? a! : b!;
    const r = await node.post('/v1/create/domain', key, { Domain: host });
    t.is((await node.pollTask('/v1/get/domain', key, r.body.task_id)).body.status, 'completed');
  }
  // Never checked yet, so due at the next tick. Were both nodes to run the tick, each would see no
  // check under way (both read before either commits) and queue its own: two checks per domain.
  const scheduled = () => cluster.admin.db.selectFrom('tasks').select(['domain', 'created_at']).where('kind', '=', CHECK_KIND)
    .where('payload', 'like', '%schedule%').where('domain', 'in', hosts).execute();
  // A tick may fall between two of the creations above, so wait until every domain has its check.
  await eventually('ticks queue a check of every domain', async () => {
    const rows = await scheduled();
    return hosts.every((h) => rows.some((r) => r.domain === h)) ? true : undefined;
  }, 180_000, 200);
  // Both nodes tick in the same second: wait until each has logged its tick of that minute (the
  // line follows the job's commit, or its skip, which may come a few ms before the runner's rows;
  // ticks are a minute apart), so whatever the other node queued is committed too.
  const tickAt = Math.min(...(await scheduled()).map((r) => Number(r.created_at))) - 30_000;
  const ticked = (output: string) => tickTimes(output, 'dns.checks').some((at) => at >= tickAt);
  await eventually('both nodes finished the tick that queued the checks', async () => (ticked(a!.output()) && ticked(b!.output()) ? true : undefined), 60_000, 100);
  const rows = await scheduled();
  for (const host of hosts) {
    const checks = rows.filter((r) => r.domain === host).map((r) => r.created_at);
    const tick = Math.min(...checks);
    t.is(checks.filter((at) => at < tick + 30_000).length, 1, `one check of ${host} at its tick, not one per node`);
  }

  const [onA, onB] = [ticks(a!.output(), 'dns.checks'), ticks(b!.output(), 'dns.checks')];
  t.true(onA.length > 0 && onB.length > 0, 'both nodes ticked');
  const runners = [onA, onB].filter((list) => list.includes('ran'));
  t.is(runners.length, 1, `one node runs the job: a ${onA.join(',')} / b ${onB.join(',')}`);
});
