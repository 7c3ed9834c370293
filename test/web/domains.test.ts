import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn, waitForText } from '../helpers/browser.js';

const browser = shareBrowser(test);

test('adding a domain shows its task and its DNS records; check, sub-domains and delete work', async (t) => {
  const app = await startTestApp(t);
  // The test runs every DNS check itself: the minute schedule would check the new domain whenever a minute turns.
  await app.app.cron.stop();
  const key = await app.keyFor();
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, origin, key);
  await goTo(page, 'Domains');

  await page.getByLabel('Domain', { exact: true }).fill('dash.example');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await waitForText(page, 'Adding dash.example: completed');
  const records = page.getByRole('region', { name: 'DNS records of dash.example' });
  await records.waitFor();
  t.true(await page.getByRole('status').filter({ hasText: 'Adding dash.example: completed' }).isVisible());
  const text = await records.innerText();
  t.regex(text, /MX\s+dash\.example\s+mx1\.mailstead\.test\s+10\s+Not checked/);
  t.regex(text, /_mailstead\.dash\.example\s+mailstead-verification=[0-9a-f]{32}/);
  t.regex(text, /mailstead\._domainkey\.dash\.example\s+v=DKIM1; k=rsa; p=/);
  const list = page.getByRole('region', { name: 'Your domains' });
  await list.getByText('dash.example').waitFor();
  t.regex(await list.innerText(), /dash\.example\s+root\s+pending/);

  // After a reload the records are a click away, as the last check left them (none yet).
  await page.reload();
  await page.getByRole('button', { name: 'Show DNS records of dash.example' }).click();
  await records.waitFor();
  t.regex(await page.getByRole('region', { name: 'DNS records', exact: true }).innerText(), /Domain status:\s+pending/);
  t.regex(await records.innerText(), /MX\s+dash\.example\s+mx1\.mailstead\.test\s+10\s+Not checked/);

  // The check button runs a DNS check now: the quiet test resolver has none of the records.
  await page.getByRole('button', { name: 'Check DNS of dash.example' }).click();
  await waitForText(page, 'Checking DNS of dash.example: completed');
  t.regex(await records.innerText(), /MX\s+dash\.example\s+mx1\.mailstead\.test\s+10\s+missing/);

  // Sub-domains of the root, with their records.
  await page.getByLabel('Parent domain').selectOption('dash.example');
  await page.getByLabel('Sub-domain labels').fill('mail, shop');
  await page.getByRole('button', { name: 'Add sub-domains' }).click();
  await waitForText(page, 'Adding sub-domains of dash.example: completed');
  await page.getByRole('region', { name: 'DNS records of shop.dash.example' }).waitFor();
  t.true(await page.getByRole('region', { name: 'DNS records of mail.dash.example' }).isVisible());
  await list.getByText('shop.dash.example').waitFor();
  t.regex(await list.innerText(), /shop\.dash\.example\s+sub/);

  // A bad name is the API's 422, shown as its reason.
  await page.getByLabel('Domain', { exact: true }).fill('localhost');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await page.getByRole('alert').filter({ hasText: 'Adding localhost' }).waitFor();

  // Delete (the confirmation is accepted): the root goes with its sub-domains.
  await page.getByRole('button', { name: 'Delete dash.example' }).click();
  await waitForText(page, 'Deleting dash.example: completed');
  await page.getByText('No domains yet. Add one above.').waitFor();
  const listed = await app.get('/v1/list/domain', key);
  t.deepEqual(listed.body.results, {});
});

test('a key without the write permission sees what it may not do', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor({ perms: ['read'] });
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await page.getByLabel('Domain', { exact: true }).fill('ro.example');
  await page.getByRole('button', { name: 'Add domain' }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'This API key may not do that' });
  await alert.waitFor();
  t.regex(await alert.innerText(), /write/);
});
