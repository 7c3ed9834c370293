import test from 'ava';
import { createGroupCommit, type Outcome } from '../../src/ingest/group-commit.js';

/** A commit that records its groups and finishes only when the test says so. */
function controlledCommit() {
  const groups: number[][] = [];
  const finish: Array<(o: Outcome<string>[] | Error) => void> = [];
  const commit = (jobs: number[]) => new Promise<Outcome<string>[]>((resolve, reject) => {
    groups.push(jobs);
    finish.push((o) => (o instanceof Error ? reject(o) : resolve(o)));
  });
  return { commit, groups, finish };
}

const turn = () => new Promise((r) => setImmediate(r));

test('jobs of one turn share a group; jobs arriving while it commits wait and go together in the next', async (t) => {
  const { commit, groups, finish } = controlledCommit();
  const group = createGroupCommit(commit);
  const results: string[] = [];
  const submit = (n: number) => group.submit(n).then((r) => { results.push(r); });
  const first = [submit(1), submit(2)];
  await turn();
  t.deepEqual(groups, [[1, 2]]);
  const later = [submit(3)];
  await turn();
  const last = [submit(4), submit(5)];
  await turn();
  t.is(groups.length, 1, 'the next group waits for the commit under way');
  t.is(group.waiting, 3);
  finish[0]([{ ok: true, value: 'a' }, { ok: true, value: 'b' }]);
  await Promise.all(first);
  await turn();
  t.deepEqual(groups[1], [3, 4, 5]);
  t.is(group.waiting, 0);
  finish[1]([{ ok: true, value: 'c' }, { ok: true, value: 'd' }, { ok: true, value: 'e' }]);
  await Promise.all([...later, ...last]);
  t.deepEqual(results, ['a', 'b', 'c', 'd', 'e']);
});

test('a job fails with its own outcome, a whole group with the commit error, and later groups still commit', async (t) => {
  const { commit, groups, finish } = controlledCommit();
  const group = createGroupCommit(commit);
  const a = group.submit(1);
  const b = group.submit(2);
  await turn();
  const c = group.submit(3);
  await turn();
  t.deepEqual(groups, [[1, 2]], 'the next group waits for the commit under way');
  finish[0]([{ ok: true, value: 'ok' }, { ok: false, error: new Error('409') }]);
  t.is(await a, 'ok');
  await t.throwsAsync(b, { message: '409' });
  await turn();
  t.deepEqual(groups[1], [3]);
  finish[1](new Error('disk full'));
  await t.throwsAsync(c, { message: 'disk full' });
  const d = group.submit(4);
  await turn();
  finish[2]([{ ok: true, value: 'after' }]);
  t.is(await d, 'after');
});

test('a group holds at most maxBatch jobs', async (t) => {
  const { commit, groups, finish } = controlledCommit();
  const group = createGroupCommit(commit, 2);
  const all = [1, 2, 3, 4, 5].map((n) => group.submit(n));
  await turn();
  t.deepEqual(groups, [[1, 2]]);
  finish[0]([{ ok: true, value: '' }, { ok: true, value: '' }]);
  await Promise.all(all.slice(0, 2));
  t.deepEqual(groups[1], [3, 4]);
  finish[1]([{ ok: true, value: '' }, { ok: true, value: '' }]);
  await Promise.all(all.slice(2, 4));
  t.deepEqual(groups[2], [5]);
  finish[2]([{ ok: true, value: '' }]);
  await all[4];
  t.is(groups.length, 3);
});
