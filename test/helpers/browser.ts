import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { TestFn } from 'ava';

/** Debian's Chromium (apt-get install chromium); playwright's own browser download is never used. */
export const CHROMIUM_PATH = process.env.MAILSTEAD_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a quiet headless Chromium in a container: no sandbox (root), no network of its own. */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** How long browser steps may take on the shared test machine. */
export const UI_WAIT_MS = 30_000;

/**
 * One browser for all the tests of a file: launched in `before`, closed in `after.always`.
 * Each test opens its own context (cookies, storage and viewport of its own).
 */
export function shareBrowser(test: TestFn): () => Browser {
  let browser: Browser | null = null;
  test.before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
  });
  test.after.always(async () => { await browser?.close(); });
  return () => {
    if (!browser) throw new Error('the browser is not running');
    return browser;
  };
}

/** Options of a new page. */
export interface PageOptions {
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
}

/** A fresh context and page; closed with the context by the returned `close`. */
export async function newPage(browser: Browser, o: PageOptions = {}): Promise<{ context: BrowserContext; page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: o.width ?? 1280, height: o.height ?? 900 }, colorScheme: o.colorScheme ?? 'light' });
  context.setDefaultTimeout(UI_WAIT_MS);
  const page = await context.newPage();
  // confirm() dialogs of delete buttons are accepted, as a person would.
  page.on('dialog', (d) => { void d.accept(); });
  return { context, page, close: () => context.close() };
}

/**
 * Opens the dashboard at `origin` and signs in with `key` through the form, as a person would;
 * resolves once the navigation is there.
 */
export async function signIn(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(origin + '/');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation').getByRole('link', { name: 'Domains' }).waitFor();
}

/** Goes to a page through the navigation and waits for its heading. */
export async function goTo(page: Page, name: 'Domains' | 'Mailboxes' | 'Aliases' | 'Inbox' | 'Webhooks' | 'Outbound' | 'Spam'): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/** How long a queued task (provisioning, DNS check) may take to show as done on a loaded machine. */
export const TASK_UI_WAIT_MS = 60_000;

/**
 * Waits until `text` shows on the page (a task's "…: completed" message, say). On timeout the
 * error carries what the page's status and alert regions said instead, so a failure explains itself.
 */
export async function waitForText(page: Page, text: string | RegExp, timeoutMs = TASK_UI_WAIT_MS): Promise<void> {
  try {
    await page.getByText(text).first().waitFor({ timeout: timeoutMs });
  } catch (err) {
    const shown = await page.locator('[role=status], [role=alert]').allInnerTexts().catch(() => []);
    throw new Error(`${(err as Error).message}\nthe page said: ${shown.map((s) => s.trim()).filter(Boolean).join(' | ') || '(nothing)'}`);
  }
}
