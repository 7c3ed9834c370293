import test from 'ava';
import { createMemo } from '../../src/outbound/memo.js';

test('a lookup is kept for its hold, looked up again after it, and a failed one is not kept', async (t) => {
  const calls: string[] = [];
  let fail = false;
  const memo = createMemo(150, async (key) => {
    calls.push(key);
    if (fail) throw new Error('database closed');
    return `${key}:${calls.length}`;
  });
  t.is(await memo('a.test'), 'a.test:1');
  t.is(await memo('a.test'), 'a.test:1');
  t.is(await memo('b.test'), 'b.test:2');
  t.deepEqual(calls, ['a.test', 'b.test']);
  // Past the hold (a bounded wait: the hold is 150 ms).
  const deadline = performance.now() + 2_000;
  while (performance.now() < deadline && (await memo('a.test')) === 'a.test:1') await new Promise((r) => setTimeout(r, 50));
  t.is(await memo('a.test'), 'a.test:3');
  fail = true;
  await t.throwsAsync(memo('c.test'), { message: 'database closed' });
  fail = false;
  t.is(await memo('c.test'), 'c.test:5');
});
