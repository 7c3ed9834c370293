import test from 'ava';
import { startTestApp } from '../helpers/app.js';

const parseCsp = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));

test('the dashboard is served at / with a strict CSP, X-Frame-Options DENY and no inline script', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const page = await fetch(origin + '/');
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.is(page.headers.get('x-frame-options'), 'DENY');
  t.is(page.headers.get('x-content-type-options'), 'nosniff');
  t.is(page.headers.get('referrer-policy'), 'no-referrer');
  const csp = parseCsp(page.headers.get('content-security-policy') ?? '');
  t.deepEqual(csp.get('default-src'), ["'none'"]);
  t.deepEqual(csp.get('script-src'), ["'self'"]);
  t.deepEqual(csp.get('connect-src'), ["'self'"]);
  t.deepEqual(csp.get('frame-src'), ["'self'"]);
  t.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
  t.deepEqual(csp.get('object-src'), ["'none'"]);
  t.deepEqual(csp.get('base-uri'), ["'none'"]);
  // No inline script, no foreign origin for code, styles or connections.
  for (const [name, values] of csp) {
    if (name === 'img-src') continue; // remote mail images, shown only when the reader asks (ARCHITECTURE.md)
    for (const v of values) t.true(["'self'", "'none'", "'unsafe-inline'"].includes(v), `${name} ${v}`);
    if (name.startsWith('script')) t.false(values.includes("'unsafe-inline'"));
  }
  const html = await page.text();
  t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/i, 'every script has a src');
  t.notRegex(html, /\son[a-z]+=/i, 'no inline event handler');
  t.notRegex(html, /https?:\/\//i, 'no foreign origin referenced');

  const js = await fetch(origin + '/js/main.js');
  t.is(js.status, 200);
  t.regex(js.headers.get('content-type') ?? '', /^text\/javascript/);
  t.is(js.headers.get('x-frame-options'), 'DENY');
  const etag = js.headers.get('etag')!;
  t.is((await fetch(origin + '/js/main.js', { headers: { 'if-none-match': etag } })).status, 304);
  t.is((await fetch(origin + '/app.css')).status, 200);
});

test('unknown dashboard paths, other methods and the API keep their own answers', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const missing = await fetch(origin + '/js/nope.js');
  t.is(missing.status, 404);
  t.deepEqual(await missing.json(), { status: 'error', reason: 'Route not found' });
  t.is((await fetch(origin + '/../package.json')).status, 404);
  t.is((await fetch(origin + '/tsconfig.json')).status, 404, 'only what the browser needs is served');
  t.is((await fetch(origin + '/%2e%2e/package.json')).status, 404);
  const post = await fetch(origin + '/', { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
  // The API is not the dashboard: no dashboard policy on it, its own answers unchanged.
  const health = await fetch(origin + '/api/health');
  t.is(health.status, 200);
  t.is(health.headers.get('content-security-policy'), null);
  t.deepEqual(await health.json(), { status: 'success' });
  t.is((await fetch(origin + '/api/v1/emails')).status, 401);
  t.is((await fetch(origin + '/metrics')).status, 200);
});
