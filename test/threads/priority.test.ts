import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import test from 'ava';

/** The nice value of the calling thread, from /proc/thread-self/stat (field 19). */
const ownNice = () => Number(readFileSync('/proc/thread-self/stat', 'utf8').replace(/^.*\) /s, '').split(' ')[16]);

test('lowerThreadPriority lowers the priority of the calling thread alone', async (t) => {
  const before = ownNice();
  const moduleUrl = new URL('../../src/threads/priority.ts', import.meta.url).href;
  // The worker (tsx registered inside it, as src/threads/entry.ts does) lowers its own priority and
  // reports its nice value; this thread's must not change.
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads');
    const { readFileSync } = require('node:fs');
    import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(moduleUrl)}); }).then(({ lowerThreadPriority, BACKGROUND_NICE }) => {
      const lowered = lowerThreadPriority();
      const nice = Number(readFileSync('/proc/thread-self/stat', 'utf8').replace(/^.*\\) /s, '').split(' ')[16]);
      parentPort.postMessage({ lowered, nice, expected: BACKGROUND_NICE });
    });
  `, { eval: true });
  const reply = await new Promise<{ lowered: boolean; nice: number; expected: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  t.true(reply.lowered);
  t.is(reply.nice, reply.expected);
  t.is(ownNice(), before, 'the calling thread of the test keeps its priority');
});
