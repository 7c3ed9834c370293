// Which code bin/mailstead.js runs: the compiled build while it is current, the TypeScript sources
// through tsx once a source changed after it, and the build alone where there are no sources (the
// Docker image). A throw-away checkout holds stand-ins for both that say which one ran.
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildIsCurrent } from '../../bin/build-current.js';
import { tempDir } from '../helpers/app.js';
import { ROOT } from '../helpers/process.js';

const run = promisify(execFile);

/** A checkout with src/ (a nested folder too), tsconfigs and a build, every file dated `at` (seconds) and the build `builtAt`. */
function checkout(t: ExecutionContext, at = 1_000_000, builtAt = 2_000_000): string {
  const root = tempDir(t);
  mkdirSync(join(root, 'src', 'db'), { recursive: true });
  mkdirSync(join(root, 'dist', 'src'), { recursive: true });
  writeFileSync(join(root, 'src', 'cli.ts'), "process.stdout.write('from the sources\\n');\n");
  writeFileSync(join(root, 'src', 'db', 'open.ts'), 'export {};\n');
  writeFileSync(join(root, 'dist', 'src', 'cli.js'), "process.stdout.write('from the build\\n');\n");
  writeFileSync(join(root, 'dist', 'tsconfig.build.tsbuildinfo'), '{}');
  for (const name of ['tsconfig.json', 'tsconfig.build.json']) writeFileSync(join(root, name), '{}');
  for (const path of ['src/cli.ts', 'src/db/open.ts', 'src/db', 'src', 'tsconfig.json', 'tsconfig.build.json']) utimesSync(join(root, path), at, at);
  utimesSync(join(root, 'dist', 'tsconfig.build.tsbuildinfo'), builtAt, builtAt);
  return root;
}

test('a build newer than every source, folder and tsconfig is current', (t) => {
  t.true(buildIsCurrent(checkout(t)));
});

test('no build, a changed source, a file added to a folder or a changed tsconfig make it stale', (t) => {
  const none = checkout(t);
  rmSync(join(none, 'dist', 'tsconfig.build.tsbuildinfo'));
  t.false(buildIsCurrent(none), 'never built');

  const edited = checkout(t);
  utimesSync(join(edited, 'src', 'db', 'open.ts'), 3_000_000, 3_000_000);
  t.false(buildIsCurrent(edited), 'a source edited after the build');

  const added = checkout(t);
  writeFileSync(join(added, 'src', 'db', 'new.ts'), 'export {};\n');
  t.false(buildIsCurrent(added), 'a file added after the build');

  const removed = checkout(t);
  rmSync(join(removed, 'src', 'db', 'open.ts'));
  t.false(buildIsCurrent(removed), 'a file removed after the build (its folder changed)');

  const configured = checkout(t);
  utimesSync(join(configured, 'tsconfig.build.json'), 3_000_000, 3_000_000);
  t.false(buildIsCurrent(configured), 'a tsconfig changed after the build');
});

test('bin/mailstead.js runs the build while it is current and the sources once they changed', async (t) => {
  const root = checkout(t);
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  const cli = async () => (await run(process.execPath, [join(root, 'bin', 'mailstead.js')], { cwd: root })).stdout;

  t.is(await cli(), 'from the build\n');
  utimesSync(join(root, 'src', 'cli.ts'), 3_000_000, 3_000_000);
  t.is(await cli(), 'from the sources\n');
  rmSync(join(root, 'src'), { recursive: true });
  t.is(await cli(), 'from the build\n', 'without sources (the Docker image) the build runs');
});
