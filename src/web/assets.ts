import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the dashboard, held in memory (the whole front end is a few tens of KB). */
export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/**
 * Where the front-end files live: `web/` at the package root. The module runs both from the sources
 * (src/web) and compiled (dist/src/web), so both depths are tried.
 */
export function webRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = join(here, up, 'web');
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  throw new Error(`dashboard files not found next to ${here}`);
}

/**
 * Reads every servable file under `root` once, at start: requests then never touch the file
 * system, and a path can only ever name a file that was listed here (no traversal to check).
 */
export function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) { walk(full); continue; }
      const type = TYPES[extname(name)];
      if (!type) continue;
      const body = readFileSync(full);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      assets.set('/' + relative(root, full).split(sep).join('/'), { body, type, etag });
    }
  };
  walk(root);
  return assets;
}
