import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';

const run = promisify(execFile);
const MB = 1024 * 1024;

// Grows the calling thread's young generation as far as it may go (a surviving working set makes
// V8 enlarge its semi-spaces) and leaves the size of its new space in \`newSpace\` (\`v8\` is node:v8).
const GROW = `
  let keep = [];
  for (let i = 0; i < 2e6; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 20000) keep = []; }
  const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
`;

test('a worker started with ownHeapLimits gets the young generation it asks for under npm start\'s --max-semi-space-size', async (t) => {
  const moduleUrl = new URL('../../src/threads/heap-limits.ts', import.meta.url).href;
  // A process launched as npm start launches the server (8 MB semi-spaces for the main thread).
  const script = `
    import v8 from 'node:v8';
    import { Worker } from 'node:worker_threads';
    import { ownHeapLimits } from ${JSON.stringify(moduleUrl)};
    const worker = new Worker(${JSON.stringify(`const v8 = require('node:v8'); ${GROW} require('node:worker_threads').parentPort.postMessage(newSpace);`)}, {
      eval: true, resourceLimits: ownHeapLimits({ maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 64 }),
    });
    const workerNewSpace = await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    await worker.terminate();
    ${GROW}
    console.log(JSON.stringify({ workerNewSpace, mainNewSpace: newSpace }));
  `;
  // A file, not -e: a worker inherits --input-type=module, and its CommonJS source would not run.
  const dir = await mkdtemp(join(tmpdir(), 'heap-limits-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'launch.mjs'), script);
  const { stdout } = await run(process.execPath, ['--max-semi-space-size=8', '--import=tsx', join(dir, 'launch.mjs')], { timeout: 30_000 });
  const { workerNewSpace, mainNewSpace } = JSON.parse(stdout) as { workerNewSpace: number; mainNewSpace: number };
  // 6 MB of young generation: two 2 MB semi-spaces. Without ownHeapLimits V8 gave the worker the
  // flag's two 8 MB ones.
  t.true(workerNewSpace <= 4 * MB, `worker new space ${workerNewSpace / MB} MB`);
  // The main thread keeps what it was launched with.
  t.is(mainNewSpace, 16 * MB);
});
