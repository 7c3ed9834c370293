// Whether the compiled build in dist/ was made from the sources as they are now, decided from file
// times alone (a few hundred stats, well under 10 ms) so that the CLI can start from it without
// loading TypeScript. The build's tsbuildinfo is written at the end of every
// `tsc -b tsconfig.build.json` (npm run build, npm start), so the build is current when that file
// is newer than every file and folder under src/ (a folder's time changes when a file in it is
// added, removed or renamed) and than the tsconfig files. tsc -b decides "up to date" the same way.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The build's record, named after tsconfig.build.json by tsc -b (outDir dist). */
export const BUILD_INFO = 'dist/tsconfig.build.tsbuildinfo';
/** What the compiled CLI runs. */
export const COMPILED_CLI = 'dist/src/cli.js';
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

/** Milliseconds since the epoch of a path's last change, or undefined when it does not exist. @param {string} path */
function changedAt(path) {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs;
}

/**
 * The newest change under a folder, itself included (a depth-first walk; symlinks are not followed).
 * @param {string} dir
 * @returns {number}
 */
function newestUnder(dir) {
  let newest = changedAt(dir) ?? Infinity;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const at = entry.isDirectory() ? newestUnder(path) : (changedAt(path) ?? Infinity);
    if (at > newest) newest = at;
  }
  return newest;
}

/**
 * True when `root`/dist holds a build of `root`/src as it is now; false when there is no build, or a
 * source, a folder of them or a tsconfig changed after it.
 * @param {string} root  the checkout (where package.json is)
 */
export function buildIsCurrent(root) {
  const built = changedAt(join(root, BUILD_INFO));
  if (built === undefined || changedAt(join(root, COMPILED_CLI)) === undefined) return false;
  for (const config of CONFIGS) if ((changedAt(join(root, config)) ?? 0) > built) return false;
  return newestUnder(join(root, 'src')) <= built;
}
