import test from 'ava';
import { nodeMailbox, startNodes } from '../helpers/nodes.js';

// The submission daily limit (DECISIONS.md section 13) is per mailbox, whichever node sends: on
// PostgreSQL the count is the database's (src/submission/pg-daily.ts), not each process's.

const LIMIT = 6;

test.serial('sends for one mailbox through two nodes, in turn and at once, together never pass the daily limit', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2, { MAILSTEAD_SUBMISSION_DAILY_LIMIT: String(LIMIT) });
  const key = await cluster.tenantKey();
  const address = await nodeMailbox(t, a!, key, 'daily.two-nodes.test', 'Daily');
  const send = (node: typeof a, subject: string) => node!.post('/v1/mail/send', key, { from: address, to: [address], subject, text: subject });

  // In turn: two on A, two on B (one recipient each), each node sees the other's.
  for (const [node, n] of [[a, 1], [b, 2], [a, 3], [b, 4]] as const) t.is((await send(node, `turn ${n}`)).status, 200, `send ${n}`);
  // At once: six more, three on each node, for the two left.
  const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i % 2 === 0 ? a : b, `race ${i}`)));
  for (const r of answers) t.true(r.status === 200 || r.status === 429, JSON.stringify(r.body));
  t.is(answers.filter((r) => r.status === 200).length, 2, 'the two left were taken, once');
  for (const node of [a, b]) t.is((await send(node, 'after')).status, 429, `nothing left on ${node!.name}`);
  const { rows } = await cluster.admin.pool.query<{ n: string }>('SELECT sum(recipients) AS n FROM submission_sends');
  t.is(Number(rows[0].n), LIMIT, 'the database counts the limit exactly');
});
