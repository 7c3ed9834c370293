import test from 'ava';
import { sql } from 'kysely';
import pg from 'pg';
import { eventually, sharedDatabase, startNodes } from '../helpers/nodes.js';

// Two server processes on one PostgreSQL database (DECISIONS.md section 17): the task queue.

const mailboxBody = (domain: string, address: string) =>
  ({ Email_fullname: 'Two Nodes', single_bulk: 'single', Domain: domain, Params: { email_id: address, password: 0 } });

test.serial('a task enqueued on one node runs once though both workers are awake, and polls the same from both', async (t) => {
  t.timeout(180_000);
  const { cluster, nodes: [a, b] } = await startNodes(t);
  const key = await cluster.tenantKey();

  const created = await a!.post('/v1/create/domain', key, { Domain: 'nodes.example' });
  t.is(created.status, 200);
  const viaB = await b!.pollTask('/v1/get/domain', key, created.body.task_id);
  t.is(viaB.body.status, 'completed', 'enqueued on A, polled on B');

  // Six mailbox creates through A; both workers hear of each (NOTIFY) and race for it.
  const addresses = Array.from({ length: 6 }, (_, i) => `user${i}@nodes.example`);
  const taskIds: number[] = [];
  for (const address of addresses) {
    const r = await a!.post('/v1/create/mailbox/single', key, mailboxBody('nodes.example', address));
    t.is(r.status, 200, JSON.stringify(r.body));
    taskIds.push(r.body.task_id);
  }
  for (const id of taskIds) {
    const fromB = await b!.pollTask('/v1/get/mailbox/single', key, id);
    const fromA = await a!.pollTask('/v1/get/mailbox/single', key, id);
    t.is(fromB.body.status, 'completed');
    t.deepEqual(fromA.body, fromB.body, 'the same answer from either node');
  }
  const rows = await cluster.admin.db.selectFrom('tasks').select(['id', 'status', 'attempts']).where('id', 'in', taskIds).execute();
  t.deepEqual(rows.map((r) => [r.status, r.attempts]), taskIds.map(() => ['completed', 1]), 'each task ran once');
  const boxes = await cluster.admin.db.selectFrom('mailboxes').select('address').where('address', 'in', addresses).execute();
  t.deepEqual(boxes.map((r) => r.address).sort(), [...addresses].sort());
});

test.serial('a task held by a node that is SIGKILLed is queued again by tasks.recover and run by the other node', async (t) => {
  t.timeout(240_000);
  const cluster = await sharedDatabase(t);
  const key = await cluster.tenantKey();
  const a = await cluster.startNode('a');
  const created = await a.post('/v1/create/domain', key, { Domain: 'held.example' });
  t.is((await a.pollTask('/v1/get/domain', key, created.body.task_id)).body.status, 'completed');

  // The test locks the domain's row in a transaction of its own: A claims the next task (it is
  // the only node yet) and then waits inside it, at the mailbox insert (whose foreign key needs
  // that row), the task `running` under A's claim.
  const holder = new pg.Client({ connectionString: cluster.url });
  await holder.connect();
  t.teardown(() => holder.end().catch(() => undefined));
  await holder.query('BEGIN');
  await holder.query("SELECT id FROM domains WHERE hostname = 'held.example' FOR UPDATE");
  const r = await a.post('/v1/create/mailbox/single', key, mailboxBody('held.example', 'held@held.example'));
  t.is(r.status, 200);
  const taskId: number = r.body.task_id;
  await eventually('the task runs on A', async () => {
    const row = await cluster.admin.db.selectFrom('tasks').select('status').where('id', '=', taskId).executeTakeFirst();
    return row?.status === 'running' ? true : undefined;
  });
  await eventually('A waits for the domain row', async () => {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM pg_locks WHERE NOT granted`.execute(cluster.admin.db);
    return rows[0]!.n > 0 ? true : undefined;
  });

  // B starts while A holds the task: its start-up recovery leaves a live node's task alone.
  const b = await cluster.startNode('b');
  t.is((await b.get(`/v1/get/mailbox/single?task_id=${taskId}`, key)).body.status, 'running');
  await a.kill();
  await holder.query('COMMIT');

  // tasks.recover ticks every minute on one node: B, now that A and its locks are gone.
  const done = await b.pollTask('/v1/get/mailbox/single', key, taskId, 150_000);
  t.is(done.body.status, 'completed');
  const row = await cluster.admin.db.selectFrom('tasks').select(['status', 'attempts']).where('id', '=', taskId).executeTakeFirstOrThrow();
  t.deepEqual([row.status, row.attempts], ['completed', 2], 'claimed by A, then once more by B');
  const boxes = await cluster.admin.db.selectFrom('mailboxes').select('id').where('address', '=', 'held@held.example').execute();
  t.is(boxes.length, 1, 'the mailbox was made once');
  t.regex(b.output(), /tasks of a node that is gone were queued again/);
});
