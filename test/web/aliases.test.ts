import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn, waitForText } from '../helpers/browser.js';
import { createMailbox, domain } from '../helpers/mailboxes.js';

const browser = shareBrowser(test);

test('aliases: create, edit, deactivate and activate, catch-all, delete', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'al.example');
  await createMailbox(app, key, 'al.example', 'ann@al.example');
  await createMailbox(app, key, 'al.example', 'bob@al.example');
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await goTo(page, 'Aliases');
  const list = page.getByRole('region', { name: 'Aliases of al.example' });
  const listed = async () => (await app.get('/v1/list/alias?domain=al.example', key)).body.results;

  await page.getByLabel('Alias address').fill('team');
  await page.getByLabel('Destinations', { exact: true }).fill('ann@al.example, bob@al.example');
  await page.getByLabel('Destination mailboxes may send as this address').check();
  await page.getByRole('button', { name: 'Create alias' }).click();
  await waitForText(page, 'Creating team@al.example: completed');
  await list.getByText('team@al.example').waitFor();
  t.deepEqual((await listed())['team@al.example'].goto, ['ann@al.example', 'bob@al.example']);

  await page.getByRole('button', { name: 'Edit team@al.example' }).click();
  await page.getByLabel('Destinations of team@al.example').fill('ann@al.example');
  await page.getByRole('button', { name: 'Save' }).click();
  await waitForText(page, 'Saving team@al.example: completed');
  t.deepEqual((await listed())['team@al.example'].goto, ['ann@al.example']);

  await page.getByRole('button', { name: 'Deactivate team@al.example' }).click();
  await waitForText(page, 'Deactivating team@al.example: completed');
  await page.getByRole('button', { name: 'Activate team@al.example' }).waitFor();
  t.false((await listed())['team@al.example'].active);
  await page.getByRole('button', { name: 'Activate team@al.example' }).click();
  await waitForText(page, 'Activating team@al.example: completed');
  await page.getByRole('button', { name: 'Deactivate team@al.example' }).waitFor();
  t.true((await listed())['team@al.example'].active);

  await page.getByLabel('Catch-all (every address of the domain without a mailbox or alias)').check();
  t.true(await page.getByLabel('Alias address').isDisabled());
  await page.getByLabel('Destinations', { exact: true }).fill('bob@al.example');
  await page.getByRole('button', { name: 'Create alias' }).click();
  await waitForText(page, 'Creating the catch-all: completed');
  await page.getByRole('button', { name: 'Delete catch-all @al.example' }).waitFor();
  t.true((await listed())['@al.example'].is_catch_all);

  await page.getByRole('button', { name: 'Delete team@al.example' }).click();
  await waitForText(page, 'Deleting team@al.example: completed');
  await list.getByText('team@al.example').waitFor({ state: 'detached' });
  t.deepEqual(Object.keys(await listed()), ['@al.example']);
});
