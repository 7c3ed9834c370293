import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import test from 'ava';

const WEB = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const LIMIT = 100 * 1024;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

test('all the dashboard JavaScript and CSS together stay under 100 KB gzipped', (t) => {
  const code = files(WEB).filter((f) => ['.js', '.css'].includes(extname(f)));
  t.true(code.some((f) => f.endsWith('main.js')) && code.some((f) => f.endsWith('.css')));
  const all = Buffer.concat(code.map((f) => readFileSync(f)));
  const gzipped = gzipSync(all, { level: 9 }).length;
  t.log(`${code.length} files, ${all.length} bytes, ${gzipped} bytes gzipped`);
  t.true(gzipped < LIMIT, `${gzipped} bytes gzipped`);
  // Each file on its own too, as browsers fetch them (the sum of separately gzipped files).
  const separate = code.reduce((n, f) => n + gzipSync(readFileSync(f), { level: 9 }).length, 0);
  t.true(separate < LIMIT, `${separate} bytes gzipped file by file`);
});

test('the page preloads every module under js/ besides main.js, and nothing else', (t) => {
  const html = readFileSync(join(WEB, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  const modules = files(join(WEB, 'js')).filter((f) => f.endsWith('.js'))
    .map((f) => '/' + f.slice(WEB.length + 1).split(/[\\/]/).join('/')).filter((p) => p !== '/js/main.js').sort();
  t.deepEqual(preloaded, modules);
  t.regex(html, /<script type="module" src="\/js\/main\.js"><\/script>/);
});
