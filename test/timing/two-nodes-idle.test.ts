import test from 'ava';
import { idleAcrossNodes } from '../db/idle-across-nodes.js';

/** Well under the 1 s DECISIONS.md section 14 allows, and far below the slowed poll, on a loaded 2-core host. */
const PROMPT_MS = 1000;

test('IDLE on node B sees EXISTS within a second of the 250 on node A (NOTIFY, not the minute-long poll)', async (t) => {
  t.timeout(240_000);
  const latencies = await idleAcrossNodes(t);
  t.is(latencies.length, 3);
  for (const ms of latencies) t.true(ms < PROMPT_MS, `EXISTS ${ms} ms after the 250 on the other node`);
});
