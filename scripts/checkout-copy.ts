/**
 * A throw-away copy of the checkout as a newcomer has it after `npm ci`: the sources, bin, config,
 * web, package files and tsconfigs, node_modules linked, no dist/. `npm start` and `npx mailstead`
 * run in it build into the copy, never into the checkout other processes are reading.
 */
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const COPIED = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'bin', 'config', 'web'];

/** Makes the copy under the system's temp directory; `remove` deletes it. */
export function checkoutCopy(prefix = 'mailstead-checkout-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const name of COPIED) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
