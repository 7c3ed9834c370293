import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import test from 'ava';
import { request } from 'undici';
import { webRoot } from '../../src/web/assets.js';
import { DASHBOARD_CSP } from '../../src/web/headers.js';
import { startTestApp } from '../helpers/app.js';

/** The dashboard's text files as they are on disk, by URL path. */
const FILES = ['/js/main.js', '/js/pages/inbox.js', '/app.css'];
const onDisk = (path: string) => readFileSync(join(webRoot(), path));

/** A raw GET (undici's request does not decode bodies, unlike fetch): headers and the bytes as sent. */
async function get(origin: string, path: string, headers: Record<string, string> = {}) {
  const res = await request(origin + path, { headers });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}
const header = (h: Record<string, string | string[] | undefined>, name: string) => String(h[name] ?? '');

test('files go out brotli-compressed when the request accepts br, gzip when only gzip, and decompress to the file', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  for (const path of FILES) {
    const file = onDisk(path);
    const br = await get(origin, path, { 'accept-encoding': 'gzip, deflate, br' });
    t.is(br.status, 200);
    t.is(header(br.headers, 'content-encoding'), 'br', path);
    t.true(br.body.length < file.length, `${path}: ${br.body.length} of ${file.length} bytes`);
    t.is(Number(header(br.headers, 'content-length')), br.body.length);
    t.deepEqual(brotliDecompressSync(br.body), file, `${path} brotli`);

    const gz = await get(origin, path, { 'accept-encoding': 'gzip' });
    t.is(header(gz.headers, 'content-encoding'), 'gzip', path);
    t.deepEqual(gunzipSync(gz.body), file, `${path} gzip`);
    // A q of 0 refuses a coding: the next one allowed is used.
    const notBr = await get(origin, path, { 'accept-encoding': 'br;q=0, gzip;q=0.5' });
    t.is(header(notBr.headers, 'content-encoding'), 'gzip', path);

    for (const res of [br, gz]) {
      t.regex(header(res.headers, 'vary'), /accept-encoding/i);
      t.regex(header(res.headers, 'content-type'), path.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
    }
    // Each representation has its own validator, and each revalidates to 304.
    t.not(header(br.headers, 'etag'), header(gz.headers, 'etag'));
    const again = await get(origin, path, { 'accept-encoding': 'br', 'if-none-match': header(br.headers, 'etag') });
    t.is(again.status, 304);
    t.regex(header(again.headers, 'vary'), /accept-encoding/i);
  }
});

test('without an accepted coding the file goes out as it is, with Vary and the same security and caching headers', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const answers = [
    await get(origin, '/js/main.js'),
    await get(origin, '/js/main.js', { 'accept-encoding': 'identity' }),
    await get(origin, '/js/main.js', { 'accept-encoding': 'deflate, zstd' }),
    await get(origin, '/js/main.js', { 'accept-encoding': 'br;q=0, gzip;q=0' }),
  ];
  const compressed = await get(origin, '/js/main.js', { 'accept-encoding': '*' });
  t.is(header(compressed.headers, 'content-encoding'), 'br', '* allows any coding');
  for (const res of answers) {
    t.is(res.status, 200);
    t.is(res.headers['content-encoding'], undefined);
    t.deepEqual(res.body, onDisk('/js/main.js'));
    t.regex(header(res.headers, 'vary'), /accept-encoding/i);
  }
  // Compression changes nothing else: the policy, framing and caching headers are the same.
  for (const name of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy', 'cache-control', 'cross-origin-opener-policy']) {
    t.is(header(compressed.headers, name), header(answers[0].headers, name), name);
  }
  t.is(header(compressed.headers, 'content-security-policy'), DASHBOARD_CSP);
  t.is(header(compressed.headers, 'cache-control'), 'no-cache');
  const identityTag = header(answers[0].headers, 'etag');
  t.is((await get(origin, '/js/main.js', { 'if-none-match': identityTag })).status, 304);
  // A validator of the uncompressed file does not stand for the compressed bytes.
  t.is((await get(origin, '/js/main.js', { 'accept-encoding': 'gzip', 'if-none-match': identityTag })).status, 200);
});

test('the page itself is compressed too, and HEAD tells the compressed length without a body', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const page = await get(origin, '/', { 'accept-encoding': 'gzip' });
  t.is(header(page.headers, 'content-encoding'), 'gzip');
  t.deepEqual(gunzipSync(page.body), onDisk('/index.html'));
  const head = await request(origin + '/app.css', { method: 'HEAD', headers: { 'accept-encoding': 'br' } });
  await head.body.dump();
  t.is(head.statusCode, 200);
  t.is(head.headers['content-encoding'], 'br');
  const br = await get(origin, '/app.css', { 'accept-encoding': 'br' });
  t.is(Number(head.headers['content-length']), br.body.length);
});
