import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn, waitForText } from '../helpers/browser.js';
import { makeInbox } from '../helpers/emails.js';

// The dashboard's vacation form and Sieve editor of a mailbox (DECISIONS.md sections 16 and 19).
const browser = shareBrowser(test);

test('the vacation form saves a reply; the filter editor shows a parse error at its line and column, then saves and activates', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, box.key);
  await goTo(page, 'Mailboxes');

  await page.getByRole('button', { name: `Vacation of ${box.address}` }).click();
  const vacation = page.getByRole('region', { name: `Vacation of ${box.address}` });
  await vacation.getByLabel('Send automatic replies').check();
  await vacation.getByLabel('Reply text').fill('Back on Monday.');
  await vacation.getByLabel('Days between replies to one sender').fill('3');
  await vacation.getByRole('button', { name: 'Save vacation' }).click();
  await waitForText(page, `Vacation of ${box.address} saved: on.`);
  const saved = await app.get(`/v1/mailboxes/${encodeURIComponent(box.address)}/vacation`, box.key);
  t.like(saved.body.data, { enabled: true, body: 'Back on Monday.', days: 3 });
  await vacation.getByRole('button', { name: 'Close' }).click();

  await page.getByRole('button', { name: `Filters of ${box.address}` }).click();
  const filters = page.getByRole('region', { name: `Filters of ${box.address}` });
  await filters.getByText('No scripts yet').waitFor();
  const editor = filters.getByLabel('Sieve script');
  await editor.fill('require ["fileinto"];\nif header :contains "subject" "invoice" {\n  fileinto "Invoices"\n}\n');
  await filters.getByRole('button', { name: 'Save script' }).click();
  const alert = filters.getByRole('alert');
  await alert.waitFor();
  t.regex(await alert.innerText(), /^Line 4, column \d+: /);
  // The caret is on the line named.
  const caretLine = await editor.evaluate((el) => { const area = el as unknown as { value: string; selectionStart: number }; return area.value.slice(0, area.selectionStart).split('\n').length; });
  t.is(caretLine, 4);

  await editor.fill('require ["fileinto"];\nif header :contains "subject" "invoice" {\n  fileinto "Invoices";\n}\n');
  await filters.getByRole('button', { name: 'Save script' }).click();
  await waitForText(page, 'main saved and active.');
  await filters.getByRole('cell', { name: 'active', exact: true }).waitFor();
  const list = await app.get(`/v1/mailboxes/${encodeURIComponent(box.address)}/sieve`, box.key);
  t.deepEqual(list.body.data.map((s: any) => [s.name, s.active]), [['main', true]]);
});
