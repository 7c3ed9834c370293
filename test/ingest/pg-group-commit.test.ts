import test from 'ava';
import type { Outcome } from '../../src/ingest/group-commit.js';
import { createOverlappingGroupCommit } from '../../src/ingest/postgres/group-commit.js';

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
const ok = (jobs: number[]): Outcome<string>[] => jobs.map((j) => ({ ok: true, value: `done ${j}` }));

test('jobs of one turn share a group; later ones start groups of their own until inFlight are under way, then gather', async (t) => {
  const { commit, groups, finish } = controlledCommit();
  const group = createOverlappingGroupCommit(commit, { inFlight: 2, maxBatch: 100 });
  const results: string[] = [];
  const submit = (n: number) => group.submit(n).then((r) => { results.push(r); });
  const all = [submit(1), submit(2)];
  await turn();
  t.deepEqual(groups, [[1, 2]]);
  all.push(submit(3));
  await turn();
  t.deepEqual(groups, [[1, 2], [3]], 'a second group starts while the first commits');
  all.push(submit(4), submit(5));
  await turn();
  all.push(submit(6));
  await turn();
  t.is(groups.length, 2, 'no third group while two are under way');
  t.is(group.waiting, 3);

  // The second group ends first: its callers are answered, and what waited goes in one group.
  finish[1]!(ok([3]));
  await turn();
  await turn();
  t.deepEqual(results, ['done 3']);
  t.deepEqual(groups[2], [4, 5, 6]);
  finish[0]!(ok([1, 2]));
  finish[2]!(ok([4, 5, 6]));
  await Promise.all(all);
  t.deepEqual(results.sort(), ['done 1', 'done 2', 'done 3', 'done 4', 'done 5', 'done 6']);
  t.is(group.waiting, 0);
});

test('a failed group fails its own jobs only; maxBatch splits what waited', async (t) => {
  const { commit, groups, finish } = controlledCommit();
  const group = createOverlappingGroupCommit(commit, { inFlight: 1, maxBatch: 2 });
  const first = group.submit(1);
  await turn();
  const rest = [2, 3, 4].map((n) => group.submit(n));
  await turn();
  finish[0]!(new Error('connection lost'));
  await t.throwsAsync(first, { message: 'connection lost' });
  await turn();
  t.deepEqual(groups, [[1], [2, 3]]);
  finish[1]!([{ ok: true, value: 'two' }, { ok: false, error: new Error('refused three') }]);
  t.is(await rest[0], 'two');
  await t.throwsAsync(rest[1]!, { message: 'refused three' });
  await turn();
  t.deepEqual(groups[2], [4]);
  finish[2]!(ok([4]));
  t.is(await rest[2], 'done 4');
});
