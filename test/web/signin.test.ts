import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { newPage, shareBrowser, signIn } from '../helpers/browser.js';

const browser = shareBrowser(test);

test('signing in with an API key keeps it in sessionStorage and sends it as a Bearer token', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const { page, close } = await newPage(browser());
  t.teardown(close);
  const authHeaders: string[] = [];
  page.on('request', (r) => { if (r.url().includes('/api/')) authHeaders.push(r.headers().authorization ?? ''); });

  await page.goto(origin + '/');
  await page.getByLabel('API key').fill('x'.repeat(32));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('That API key was not accepted.').waitFor();

  await signIn(page, origin, key);
  t.is(await page.evaluate<string | null>("sessionStorage.getItem('mailstead.apiKey')"), key);
  t.is(await page.evaluate<number>('localStorage.length'), 0);
  t.is(await page.evaluate<string>('document.cookie'), '');
  t.true(authHeaders.includes(`Bearer ${key}`));
  for (const name of ['Domains', 'Mailboxes', 'Aliases', 'Inbox', 'Webhooks', 'Outbound']) {
    t.true(await page.getByRole('navigation').getByRole('link', { name, exact: true }).isVisible(), name);
  }

  // A reload in the same tab stays signed in; signing out forgets the key.
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key').waitFor();
  t.is(await page.evaluate<string | null>("sessionStorage.getItem('mailstead.apiKey')"), null);
});

test('sign-in works with the keyboard alone', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await page.goto(`http://127.0.0.1:${app.httpPort}/`);
  // The field has focus on arrival; Tab from the top of the page reaches it too.
  await page.keyboard.press('Tab');
  for (let i = 0; i < 5 && !(await page.evaluate<boolean>("document.activeElement?.getAttribute('name') === 'api-key'")); i++) await page.keyboard.press('Tab');
  t.is(await page.evaluate<string | null>("document.activeElement?.getAttribute('name')"), 'api-key');
  await page.keyboard.type(key);
  await page.keyboard.press('Tab');
  t.is(await page.evaluate<string | null>('document.activeElement?.textContent'), 'Sign in');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
  // The navigation is reachable by Tab and follows with Enter.
  let reached = false;
  for (let i = 0; i < 15 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate<boolean>("document.activeElement?.textContent === 'Inbox'");
  }
  t.true(reached);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
});
