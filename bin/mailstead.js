#!/usr/bin/env node
// The `mailstead` admin CLI. It runs the compiled build (dist/, made by npm run build or npm start)
// when that build is current, a call of a fraction of a second; otherwise, in a checkout whose
// sources changed since the last build, it runs the TypeScript sources through tsx (about three
// seconds of compiling on the fly), so it never lags behind a stale build. The Docker image has
// only the compiled build.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent, COMPILED_CLI } from './build-current.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = new URL('../src/cli.ts', import.meta.url);
if (!existsSync(source) || buildIsCurrent(root)) {
  await import(new URL(`../${COMPILED_CLI}`, import.meta.url).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
}
