/**
 * The dashboard in headless Chromium against a data dir seeded by seed-emails.ts: the server runs
 * as a child process (the build when it is current, as read.ts does), and for each of RUNS rounds
 * a fresh browser context (empty cache, the key already in the tab's sessionStorage) navigates
 * to the inbox and
 *   inbox_interactive_ms  navigation start to the first message row in the list (a button a
 *                         person can click: the list fetched and rendered, the scripts running);
 *   open_message_ms       a click on the round's row (the 1st, 2nd, ... of the first page) to
 *                         the reading pane showing that message's subject.
 * Both are timed inside the page (performance.now(), a MutationObserver), so the driver's polling
 * adds nothing. Also the bytes of JS and CSS the first round transferred (encoded body plus
 * response headers, as DevTools counts them) and how many files.
 * Targets (issue 35): inbox interactive within 500 ms, a message open under 150 ms (medians).
 * The content codings the JS and CSS came in are listed with their bytes. `--timeline` adds, for
 * each round, what the page fetched until its first row and when (the page's Resource Timing:
 * start, first byte and end of each request in ms from navigation), to tell where a slow round went.
 *
 * Usage: node --import tsx scripts/bench/dashboard.ts DIR [--runs=5] [--main=FILE] [--timeline]
 * Needs /usr/bin/chromium (or MAILSTEAD_TEST_CHROMIUM). Bounded: RUNS rounds, each step 30 s at most.
 * Prints one JSON line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../test/helpers/browser.js';
import { startServer } from './email-bench-server.js';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const args = new Map(process.argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=') as [string, string]));
const dataDir = positional[0];
if (!dataDir) {
  process.stderr.write('usage: dashboard.ts DIR [--runs=5] [--main=FILE]  (DIR seeded by seed-emails.ts)\n');
  process.exit(2);
}
const RUNS = Number(args.get('runs') ?? 5);
const TIMELINE = args.has('timeline');
const STEP_MS = 30_000;
const key = readFileSync(join(dataDir, 'bench.key'), 'utf8').trim();
const db = new Database(join(dataDir, 'mailstead.db'), { readonly: true });
const emails = (db.prepare('SELECT count(*) AS n FROM emails').get() as { n: number }).n;
db.close();

/**
 * Runs in the page: clicks row `index` of the list and resolves with the milliseconds until the
 * reading pane shows that row's subject. No named inner functions: tsx would wrap them in a
 * helper that does not exist in the page (and the page's CSP forbids evaluating strings).
 */
async function openInPage({ index, limit }: { index: number; limit: number }): Promise<number> {
  // The page's globals, loosely typed: the scripts compile without the DOM library.
  const { document, MutationObserver } = globalThis as unknown as { document: any; MutationObserver: any };
  const rows = document.querySelectorAll('ul[aria-label="Messages"] li button');
  const row = rows[index % rows.length];
  const subject = (row.querySelector('.subject')?.firstChild?.textContent ?? '').trim();
  const pane = document.querySelector('section[aria-label="Message"]')!;
  const started = performance.now();
  row.click();
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => { observer.disconnect(); reject(new Error(`message "${subject}" not shown after ${limit} ms`)); }, limit);
    const observer = new MutationObserver(() => {
      if ((pane.querySelector('h2.mail-subject')?.textContent ?? '').trim() !== subject) return;
      clearTimeout(deadline);
      observer.disconnect();
      resolve();
    });
    observer.observe(pane, { childList: true, subtree: true, characterData: true });
  });
  return performance.now() - started;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const round1 = (x: number) => Math.round(x * 10) / 10;

const server = await startServer(dataDir, args.get('main'));
const origin = server.base.replace(/\/api$/, '');
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
const interactive: number[] = [];
const open: number[] = [];
const transferred = { js_bytes: 0, css_bytes: 0, js_files: 0, css_files: 0, encodings: [] as string[] };
const timelines: string[][] = [];
try {
  // One unmeasured load first: the server's first requests (JIT, page cache) are not what a person meets.
  for (let run = -1; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_MS);
    // Signed in already (the key in sessionStorage, as the sign-in form leaves it), and a
    // MutationObserver noting when the first message row appears, from the page's first script on.
    await context.addInitScript(`
      sessionStorage.setItem('mailstead.apiKey', ${JSON.stringify(key)});
      new MutationObserver((_, observer) => {
        if (document.querySelector('ul[aria-label="Messages"] li button')) {
          window.__firstRowAt = performance.now();
          observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    `);
    const page = await context.newPage();
    const measured: Array<Promise<void>> = [];
    if (run === 0) {
      page.on('requestfinished', (request) => {
        const type = request.resourceType();
        if (type !== 'script' && type !== 'stylesheet') return;
        measured.push(request.sizes().then(async (s) => {
          const coding = (await request.response())?.headers()['content-encoding'] ?? 'identity';
          if (!transferred.encodings.includes(coding)) transferred.encodings.push(coding);
          const bytes = s.responseBodySize + s.responseHeadersSize;
          if (type === 'script') { transferred.js_bytes += bytes; transferred.js_files++; } else { transferred.css_bytes += bytes; transferred.css_files++; }
        }));
      });
    }
    await page.goto(`${origin}/#/inbox`);
    await page.waitForFunction(() => (globalThis as unknown as { __firstRowAt?: number }).__firstRowAt !== undefined, undefined, { timeout: STEP_MS });
    const firstRowAt = await page.evaluate(() => (globalThis as unknown as { __firstRowAt: number }).__firstRowAt);
    if (TIMELINE && run >= 0) {
      // What was fetched by the first row, in the page's own clock (navigation start is 0).
      const entries = await page.evaluate(() => (globalThis as unknown as { performance: { getEntriesByType(t: string): any[] } }).performance
        .getEntriesByType('resource').map((e) => [e.name, e.startTime, e.responseStart, e.responseEnd] as [string, number, number, number]));
      timelines.push([`first row ${Math.round(firstRowAt)}`, ...entries.filter((e) => e[1] <= firstRowAt)
        .map(([name, start, first, end]) => `${new URL(name).pathname.replace(/^\/api/, '')} ${Math.round(start)}/${Math.round(first)}/${Math.round(end)}`)]);
    }
    // Click the round's row in the page and time it there until the pane shows its subject.
    const openMs = await page.evaluate(openInPage, { index: Math.max(run, 0), limit: STEP_MS });
    await Promise.all(measured);
    if (run >= 0) { interactive.push(round1(firstRowAt)); open.push(round1(openMs)); }
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
console.log(JSON.stringify({
  bench: 'dashboard', emails, runs: RUNS,
  inbox_interactive_ms: { median: median(interactive), runs: interactive },
  open_message_ms: { median: median(open), runs: open },
  transferred,
  ...(TIMELINE ? { timeline: timelines } : {}),
}));
