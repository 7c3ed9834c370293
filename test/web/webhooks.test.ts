import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { makeInbox } from '../helpers/emails.js';
import { hexSignatureMatches, PRIVATE_HOOKS, startReceiver } from '../helpers/webhooks.js';

const browser = shareBrowser(test);

test('webhooks: the secret is shown once, toggle, rotate, delivery log and replay, delete', async (t) => {
  const app = await startTestApp(t, { env: PRIVATE_HOOKS });
  const inbox = await makeInbox(app);
  const receiver = await startReceiver(t);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Webhooks');

  await page.getByLabel('Webhook URL').fill(receiver.url);
  await page.getByLabel('email.deleted').uncheck();
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const once = page.getByRole('region', { name: /^Signing secret of webhook \d+$/ });
  await once.waitFor();
  const secret = await once.locator('code.secret').innerText();
  t.regex(secret, /^[0-9a-f]{64}$/);
  const list = page.getByRole('region', { name: 'Webhooks' });
  await list.getByText(receiver.url).waitFor();
  t.regex(await list.innerText(), /email\.received, email\.read\s+active/);
  const [hook] = (await app.get('/v1/webhooks', inbox.key)).body.data;
  await once.getByRole('button', { name: 'Dismiss' }).click();
  t.is(await page.getByText(secret).count(), 0);

  // A delivery, signed with the secret the page showed; then the log and a replay.
  const sent = await app.post('/v1/mail/inbound', inbox.key, { message_id: '<hook-1@x>', from_email: 'a@b.example', to_email: inbox.address, subject: 'hi', received_at: new Date().toISOString() });
  t.is(sent.status, 200);
  const [first] = await receiver.waitForCount(1, 60_000);
  t.deepEqual(hexSignatureMatches(secret, first), [true]);
  await page.getByRole('button', { name: `Deliveries of webhook ${hook.id}` }).click();
  const log = page.getByRole('region', { name: `Deliveries of webhook ${hook.id}` });
  await log.waitFor();
  t.regex(await log.innerText(), /email\.received/);
  await log.getByRole('button', { name: /^Replay delivery \d+$/ }).click();
  await page.getByText(/^Delivery \d+ queued again\.$/).waitFor();
  const again = await receiver.waitForCount(2, 60_000);
  t.is(again[1].headers['x-webhook-id'], first.headers['x-webhook-id']);

  // Rotate: a new secret, shown once, different from the first.
  await page.getByRole('button', { name: `Rotate secret of webhook ${hook.id}` }).click();
  const rotated = page.getByRole('region', { name: `New signing secret of webhook ${hook.id}` });
  await rotated.waitFor();
  const second = await rotated.locator('code.secret').innerText();
  t.regex(second, /^[0-9a-f]{64}$/);
  t.not(second, secret);

  await page.getByRole('button', { name: `Deactivate webhook ${hook.id}` }).click();
  await page.getByText(`Webhook ${hook.id} deactivated.`).waitFor();
  await page.getByRole('button', { name: `Activate webhook ${hook.id}` }).waitFor();
  // What the page said, should the server disagree (a second toggle would say "activated").
  const said = await page.getByRole('status').allInnerTexts();
  t.false((await app.get('/v1/webhooks', inbox.key)).body.data[0].is_active, said.join(' | '));

  await page.getByRole('button', { name: `Delete webhook ${hook.id}` }).click();
  await page.getByText('No webhooks yet.').waitFor();
  t.deepEqual((await app.get('/v1/webhooks', inbox.key)).body.data, []);
});

test('a key without the webhook permission is told so', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor({ perms: ['read', 'write'] });
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await goTo(page, 'Webhooks');
  const alert = page.getByRole('alert').filter({ hasText: 'This API key may not do that' });
  await alert.waitFor();
  t.regex(await alert.innerText(), /webhook/);
});
