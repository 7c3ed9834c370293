#!/usr/bin/env node
// The `mailstead` admin CLI. In a checkout (src/ present) it runs the TypeScript source through tsx,
// so it can never lag behind a stale build; in the Docker image only the compiled build exists.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/src/cli.js', import.meta.url).href);
}
