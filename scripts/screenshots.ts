/**
 * Makes the dashboard screenshots in docs/screenshots/: boots the real app in this process on a
 * temporary data dir with sample data (a tenant, a domain, mailboxes, a webhook with deliveries,
 * received mail, one outbound message), drives Debian's Chromium through the pages as a person
 * would and saves one PNG per page: desktop 1280 px wide, each page also on a phone 390 px wide
 * (`NAME-390.png`, one screenful from the page's first table), the inbox also in the dark colour scheme. Not a test: run it
 * by hand after the dashboard's look changes.
 *
 * Usage: node --import tsx scripts/screenshots.ts [OUT_DIR]   (default docs/screenshots)
 * Needs /usr/bin/chromium (or MAILSTEAD_TEST_CHROMIUM). Bounded: every browser step waits 30 s at most.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, goTo, newPage, signIn, waitForText } from '../test/helpers/browser.js';
import { quietDns } from '../test/helpers/dns.js';

const OUT = resolve(process.argv[2] ?? 'docs/screenshots');
const DOMAIN = 'acme.example';
const MAILBOXES = [['ann', 'Ann Lee'], ['bob', 'Bob Stone'], ['support', 'Support Desk']] as const;

/** A webhook receiver on loopback that accepts every delivery, so the log shows successes. */
const receiver = createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200).end('ok'); }); });
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/mail`;

const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-screenshots-'));
const config = loadConfig({
  MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0', MAILSTEAD_SUBMISSION_PORT: '0',
  MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0', MAILSTEAD_LOG_LEVEL: 'silent', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
  MAILSTEAD_HOSTNAME: 'mx.mailstead.example', MAILSTEAD_MX_HOSTS: 'mx1.mailstead.example,mx2.mailstead.example',
  MAILSTEAD_DNS_SERVERS: await quietDns(), MAILSTEAD_WEBHOOK_ALLOW_PRIVATE: 'true',
});
const app = await createApp({ config });
const { httpPort } = await app.start();
const origin = `http://127.0.0.1:${httpPort}`;
let browser: Browser | null = null;

/** Calls the API with the key; throws on anything but 200, so a broken sample is loud. */
async function api(key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${origin}/api${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Polls a task until it is done (30 s at most). */
async function task(key: string, path: string, taskId: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const r = await api(key, 'GET', `${path}?task_id=${taskId}`);
    if (r.status === 'completed') return;
    if (!['queued', 'running'].includes(r.status)) throw new Error(`task ${path}: ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`task ${path} ${taskId} not done after 30 s`);
}

/** Received mail: a short thread of ordinary business messages, one in HTML. */
function sampleMail(): Array<Record<string, unknown>> {
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  return [
    { from_email: 'orders@supplier.example', from_name: 'Supplier Orders', to_email: `ann@${DOMAIN}`, subject: 'Order 4471 has shipped', body_text: 'Your order 4471 left our warehouse today and should arrive on Thursday.', received_at: at(380) },
    { from_email: 'carol@partner.example', from_name: 'Carol Diaz', to_email: `bob@${DOMAIN}`, subject: 'Workshop agenda', body_text: 'Hi Bob,\nattached is the draft agenda for the workshop. Comments welcome.\nCarol', received_at: at(240) },
    { from_email: 'noreply@billing.example', from_name: 'Billing', to_email: `ann@${DOMAIN}`, subject: 'Invoice 2026-118 is available', body_text: 'Invoice 2026-118 (EUR 1,240.00) is due on 10 December.', received_at: at(180) },
    { from_email: 'dan@customer.example', from_name: 'Dan Okafor', to_email: `support@${DOMAIN}`, subject: 'Cannot sign in since yesterday', body_text: 'Hello,\nsince yesterday the sign-in page says my password is wrong. Could you reset it?\nThanks, Dan', received_at: at(95) },
    { from_email: 'eve@customer.example', from_name: 'Eve Martin', to_email: `support@${DOMAIN}`, subject: 'Thanks for the quick fix', body_text: 'All good now, thank you!', received_at: at(40) },
    {
      from_email: 'frank@partner.example', from_name: 'Frank Weber', to_email: `ann@${DOMAIN}`, subject: 'Quarterly numbers',
      attachments: [{ filename: 'q3.csv', content_type: 'text/csv', content: Buffer.from('quarter,revenue,costs\nQ2,100,80\nQ3,112,80\n').toString('base64') }],
      body_text: 'Hello Ann,\n\nthe numbers for the third quarter are below: revenue is up 12 % on the second quarter, costs are flat.\n\nShall we go through them on Monday at 10:00?\n\nBest regards,\nFrank',
      body_html: '<p>Hello Ann,</p><p>the numbers for the third quarter are below: revenue is up <b>12 %</b> on the second quarter, costs are flat.</p><p>Shall we go through them on Monday at 10:00?</p><p>Best regards,<br>Frank</p>',
      received_at: at(12),
    },
  ].map((m, i) => ({ message_id: `<sample-${i}@${String(m.from_email).split('@')[1]}>`, ...m }));
}

/** Saves a PNG of the page and says its size (the README and docs keep each under ~200 KB). */
async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  // Let transitions and late renders settle: the page is idle once no request is in flight.
  await page.waitForLoadState('networkidle');
  const file = join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  process.stderr.write(`${name}.png ${Math.round(statSync(file).size / 1024)} KB\n`);
}

/** Opens the inbox and the "Quarterly numbers" message in it. */
async function openMessage(page: Page): Promise<void> {
  await goTo(page, 'Inbox');
  const messages = page.getByRole('list', { name: 'Messages' });
  await messages.getByRole('button', { name: /Quarterly numbers/ }).click();
  const pane = page.getByRole('region', { name: 'Message' });
  await pane.getByRole('heading', { name: 'Quarterly numbers' }).waitFor();
  // On a narrow screen the pane sits below the list: show the pane, as a reader would see it.
  await pane.evaluate((el) => { if ((globalThis as unknown as { innerWidth: number }).innerWidth < 700) el.scrollIntoView({ block: 'start' }); });
}

try {
  mkdirSync(OUT, { recursive: true });
  await app.tenants.createTenant('acme', { plan: true, admin: false });
  const key = await app.tenants.createKey('acme', 'read,write,inbound,webhook');

  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
  const desktop = await newPage(browser);
  const page = desktop.page;

  // Sign-in, before the key is typed.
  await page.goto(origin + '/');
  await page.getByLabel('API key').waitFor();
  await shoot(page, 'signin');

  // The domain is added through the page, which then shows its DNS records.
  await signIn(page, origin, key);
  await goTo(page, 'Domains');
  await page.getByLabel('Domain', { exact: true }).fill(DOMAIN);
  await page.getByRole('button', { name: 'Add domain' }).click();
  await waitForText(page, `Adding ${DOMAIN}: completed`);
  await page.getByRole('region', { name: `DNS records of ${DOMAIN}` }).waitFor();
  await shoot(page, 'domains', true);

  // The rest of the sample through the API, as another client would make it.
  for (const [local, name] of MAILBOXES) {
    const r = await api(key, 'POST', '/v1/create/mailbox/single', { Email_fullname: name, single_bulk: 'single', Domain: DOMAIN, Params: { email_id: `${local}@${DOMAIN}`, password: 'sample-password-123' } });
    await task(key, '/v1/get/mailbox/single', r.task_id);
  }
  await api(key, 'POST', '/v1/webhooks', { url: receiverUrl, events: ['email.received', 'email.read', 'email.deleted'] });
  for (const mail of sampleMail()) await api(key, 'POST', '/v1/mail/inbound', mail);
  const deadline = Date.now() + 30_000;
  while ((await api(key, 'GET', '/v1/emails?per_page=25')).data.length < sampleMail().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));

  await goTo(page, 'Mailboxes');
  await page.getByText(`support@${DOMAIN}`).first().waitFor();
  await shoot(page, 'mailboxes', true);

  await openMessage(page);
  await shoot(page, 'inbox');

  // The inbox on a desktop in the dark scheme.
  const dark = await newPage(browser, { colorScheme: 'dark' });
  await signIn(dark.page, origin, key);
  await openMessage(dark.page);
  await shoot(dark.page, 'inbox-dark');
  await dark.close();

  await goTo(page, 'Webhooks');
  await page.getByText(receiverUrl).first().waitFor();
  const hook = page.getByRole('button', { name: /^Deliveries of webhook \d+$/ }).first();
  await hook.click();
  await page.getByRole('region', { name: /^Deliveries of webhook \d+$/ }).getByText('email.received').first().waitFor();
  await shoot(page, 'webhooks', true);

  // One message out: the quiet resolver knows no MX for it, so it fails and bounces (after the
  // inbox shots, which stay with the received sample).
  await api(key, 'POST', '/v1/mail/send', { from: `ann@${DOMAIN}`, to: ['frank@partner.example'], subject: 'Re: Quarterly numbers', text: 'Monday at 10:00 works for me.\nAnn' });
  await goTo(page, 'Outbound');
  await page.getByText('frank@partner.example').first().waitFor();
  await shoot(page, 'outbound');
  await desktop.close();

  // Every page on a phone, scrolled to its first table (a table wider than the phone scrolls in its box).
  const phone = await newPage(browser, { width: 390, height: 844 });
  await signIn(phone.page, origin, key);
  for (const name of ['Domains', 'Mailboxes', 'Webhooks', 'Outbound'] as const) {
    await goTo(phone.page, name);
    const table = phone.page.locator('.table-wrap').first();
    await table.waitFor();
    await table.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shoot(phone.page, `${name.toLowerCase()}-390`);
  }
  await openMessage(phone.page);
  await shoot(phone.page, 'inbox-390');
  await phone.close();
} finally {
  await browser?.close();
  await app.stop();
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
}
