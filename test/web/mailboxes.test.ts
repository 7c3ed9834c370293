import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn, waitForText } from '../helpers/browser.js';
import { domain } from '../helpers/mailboxes.js';

const browser = shareBrowser(test);

test('mailboxes: a generated password is shown once, bulk creation, IMAP settings, delete', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'box.example');
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await goTo(page, 'Mailboxes');

  await page.getByLabel('Full name').fill('Ann Lee');
  await page.getByLabel('Address', { exact: true }).fill('ann');
  await page.getByRole('button', { name: 'Create mailbox', exact: true }).click();
  await waitForText(page, 'Creating ann@box.example: completed');
  const once = page.getByRole('region', { name: 'New mailboxes and their passwords' });
  await once.waitFor();
  const password = await once.locator('code.secret').innerText();
  t.regex(password, /^[A-Za-z0-9_-]{24}$/);
  t.regex(await once.innerText(), /ann@box\.example/);
  t.true(await once.getByText('Copy it now: it is not shown again.').isVisible());

  // The list shows the mailbox with its IMAP settings, and never a password.
  const list = page.getByRole('region', { name: 'Mailboxes of box.example' });
  await list.getByText('ann@box.example').waitFor();
  t.regex(await list.innerText(), /IMAP: mx\.mailstead\.test:993 \(ssl\)/);
  t.false((await list.innerText()).includes(password));
  // Its Apple profile (DECISIONS.md section 21) as a download link, fetched with the key when clicked.
  const profile = list.getByRole('link', { name: 'Apple profile for ann@box.example' });
  t.is(await profile.getAttribute('href'), '/api/v1/mailboxes/ann@box.example/mobileconfig');
  t.is(await profile.getAttribute('download'), 'ann@box.example.mobileconfig');
  t.is(await profile.getAttribute('type'), 'application/x-apple-aspen-config');
  t.is(await profile.innerText(), 'Apple profile');

  // Dismissed, or after a reload, the password is gone for good.
  await once.getByRole('button', { name: 'Dismiss' }).click();
  t.is(await page.getByText(password).count(), 0);
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
  await list.getByText('ann@box.example').waitFor();
  t.is(await page.getByText(password).count(), 0);
  t.false(JSON.stringify(await page.evaluate<Record<string, string>>('({ ...sessionStorage })')).includes(password));

  // Bulk: three mailboxes named after a person, each with its own generated password.
  await page.getByLabel('Person\'s name').fill('Bob Stone');
  await page.getByLabel('Number of mailboxes').fill('3');
  await page.getByRole('button', { name: 'Create mailboxes' }).click();
  await waitForText(page, 'Creating 3 mailboxes: completed');
  await once.waitFor();
  const rows = await once.locator('tbody tr').allInnerTexts();
  t.is(rows.length, 3);
  t.regex(rows.join('\n'), /bob\.stone@box\.example\s+[A-Za-z0-9_-]{24}/);

  // Delete one (the confirmation is accepted).
  await page.getByRole('button', { name: 'Delete ann@box.example' }).click();
  await waitForText(page, 'Deleting ann@box.example: completed');
  await t.notThrowsAsync(list.getByText('ann@box.example').waitFor({ state: 'detached' }));
  const left = await app.get('/v1/list/mailbox?domain=box.example', key);
  t.false('ann@box.example' in left.body.results);
  t.is(Object.keys(left.body.results).length, 3);
});
