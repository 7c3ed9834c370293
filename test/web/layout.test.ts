import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { makeInbox, type Inbox } from '../helpers/emails.js';
import { PRIVATE_HOOKS, startReceiver, waitFor } from '../helpers/webhooks.js';

const browser = shareBrowser(test);
const PAGES = ['Domains', 'Mailboxes', 'Aliases', 'Inbox', 'Webhooks', 'Outbound'] as const;

/** An account with something on every page: a domain, mailboxes, an alias, mail, a webhook. */
async function populated(t: ExecutionContext): Promise<{ app: TestClient; inbox: Inbox }> {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const inbox = await makeInbox(app, { count: 2, domain: 'a-rather-long-domain-name-for-phones.example' });
  const receiver = await startReceiver(t);
  await app.post('/v1/webhooks', inbox.key, { url: receiver.url + '/with/a/long/path/that/could/widen/the/page', events: ['email.received'] });
  await app.post('/v1/create/alias', inbox.key, { Domain: inbox.domain, Params: { address: `team@${inbox.domain}`, goto: inbox.mailboxes.map((m) => m.address) } });
  for (let i = 0; i < 3; i++) {
    await app.post('/v1/mail/inbound', inbox.key, {
      message_id: `<layout-${i}@x>`, from_email: 'someone.with.a.long.address@sender.example', from_name: 'Someone Sending',
      to_email: inbox.address, subject: `A subject line that is long enough to need cutting on a phone screen, number ${i}`,
      body_text: 'Hello,\n' + 'A line of mail text. '.repeat(30), received_at: new Date(Date.now() - i * 60_000).toISOString(),
    });
  }
  await waitFor(async () => (await app.get('/v1/emails', inbox.key)).body.data.length === 3, 'the stored emails', 60_000);
  return { app, inbox };
}

/** WCAG relative luminance of a computed `rgb(...)` colour. */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number);
  const lin = (v: number) => { const c = v / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/**
 * Controls without an accessible name (label, aria-label, aria-labelledby or text) and elements
 * taken out of the natural tab order, described for the failure message; empty when all is well.
 */
const UNNAMED = `[...document.querySelectorAll('button, input, select, textarea, a[href], [tabindex]')]
  .filter((el) => !el.closest('[hidden]') && el.type !== 'hidden')
  .filter((el) => {
    if (Number(el.getAttribute('tabindex')) > 0) return true;
    if (el.matches('[tabindex]:not(button, input, select, textarea, a)')) return !(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.matches('h1, h2, h3, main'));
    const labelled = (el.labels && el.labels.length > 0) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    return !labelled && !(el.textContent || '').trim();
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

/** How far the page scrolls sideways (0 when it fits). */
const sideScroll = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

test('at 360 px every page fits without horizontal scrolling; the inbox reads at 1280 px too', async (t) => {
  const { app, inbox } = await populated(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const phone = await newPage(browser(), { width: 360, height: 740 });
  t.teardown(phone.close);
  await signIn(phone.page, origin, inbox.key);
  t.is(await sideScroll(phone.page), 0, 'sign-in shell');
  for (const name of PAGES) {
    await goTo(phone.page, name);
    await phone.page.waitForLoadState('networkidle');
    t.is(await sideScroll(phone.page), 0, name);
    t.deepEqual(await phone.page.evaluate<string[]>(UNNAMED), [], `${name}: every control has a name`);
  }
  await goTo(phone.page, 'Inbox');
  await phone.page.getByRole('list', { name: 'Messages' }).getByRole('button', { name: /number 0/ }).click();
  await phone.page.getByRole('region', { name: 'Message' }).getByRole('heading', { name: /number 0/ }).waitFor();
  t.is(await sideScroll(phone.page), 0, 'an open message');
  await phone.page.screenshot({ path: '/tmp/mailstead-inbox-360.png', fullPage: false });

  const desk = await newPage(browser(), { width: 1280, height: 800 });
  t.teardown(desk.close);
  await signIn(desk.page, origin, inbox.key);
  await goTo(desk.page, 'Inbox');
  await desk.page.getByRole('list', { name: 'Messages' }).getByRole('button', { name: /number 1/ }).click();
  await desk.page.getByRole('region', { name: 'Message' }).getByRole('heading', { name: /number 1/ }).waitFor();
  t.is(await sideScroll(desk.page), 0);
  // Side by side on a desktop: the list and the reading pane share a row.
  const listBox = await desk.page.getByRole('list', { name: 'Messages' }).boundingBox();
  const paneBox = await desk.page.getByRole('region', { name: 'Message' }).boundingBox();
  t.true(listBox !== null && paneBox !== null && paneBox.x > listBox.x + listBox.width - 1);
  await desk.page.screenshot({ path: '/tmp/mailstead-inbox-1280.png', fullPage: false });
});

test('the dark scheme is dark and the light scheme light, text readable in both', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const colours = async (scheme: 'light' | 'dark') => {
    const { page, close } = await newPage(browser(), { colorScheme: scheme });
    try {
      await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
      if (scheme === 'dark') await page.screenshot({ path: '/tmp/mailstead-domains-dark.png' });
      const style = await page.evaluate<{ bg: string; fg: string }>('({ bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.body).color })');
      const bg = luminance(style.bg);
      const fg = luminance(style.fg);
      return { bg, contrast: (Math.max(bg, fg) + 0.05) / (Math.min(bg, fg) + 0.05) };
    } finally { await close(); }
  };
  const light = await colours('light');
  const dark = await colours('dark');
  t.true(light.bg > 0.8, `light background luminance ${light.bg}`);
  t.true(dark.bg < 0.05, `dark background luminance ${dark.bg}`);
  t.true(light.contrast >= 7, `light contrast ${light.contrast}`);
  t.true(dark.contrast >= 7, `dark contrast ${dark.contrast}`);
});
