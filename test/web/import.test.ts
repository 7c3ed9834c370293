import test from 'ava';
import type { Page } from 'playwright-core';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn, TASK_UI_WAIT_MS, waitForText } from '../helpers/browser.js';
import { startDovecot } from '../helpers/dovecot.js';
import { listAll, makeInbox } from '../helpers/emails.js';

// The dashboard's import form (DECISIONS.md sections 16 and 20) against a real Dovecot on loopback.
const browser = shareBrowser(test);
const ALLOW = { MAILSTEAD_IMPORT_ALLOW_PRIVATE: 'true' };
// Outside the repository, as layout.test.ts does; docs/screenshots/import-1280.png is a copy of one run.
const SCREENSHOT = '/tmp/mailstead-import-1280.png';

const message = (i: number, folder: string) => [
  `From: Old Friend <friend${i}@old.example>`, 'To: alice@old.example', `Subject: ${folder} note ${i}`,
  `Message-ID: <web${i}.${folder}@old.example>`, 'Date: Tue, 2 Jan 2024 10:00:00 +0000', '', `Body ${i}.`, ''].join('\r\n');

/** Opens the import panel of `address` and fills the IMAP part of the form. */
async function fillImapForm(page: Page, address: string, port: number, password: string): Promise<void> {
  await page.getByRole('button', { name: `Import into ${address}` }).click();
  const panel = page.getByRole('region', { name: `Import mail into ${address}` });
  await panel.getByLabel('IMAP server').fill('127.0.0.1');
  await panel.getByLabel('Port').fill(String(port));
  await panel.getByLabel('Security').selectOption('none');
  await panel.getByLabel('Username').fill('alice');
  await panel.getByLabel('Password').fill(password);
  await panel.getByRole('button', { name: 'Start import' }).click();
}

test('the import form copies a Dovecot mailbox, its progress bar reaching the end, and shows a failure\'s reason', async (t) => {
  t.timeout(180_000);
  const dovecot = await startDovecot(t, { alice: 'old-secret' });
  const source = await dovecot.client('alice');
  await source.mailboxCreate('Archive');
  const seeded = [['INBOX', 5], ['Archive', 3]] as const;
  for (const [folder, n] of seeded) for (let i = 0; i < n; i++) await source.append(folder, message(i, folder), i % 2 ? ['\\Seen'] : []);
  const total = seeded.reduce((s, [, n]) => s + n, 0);

  const app = await startTestApp(t, { env: ALLOW });
  const box = await makeInbox(app);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, box.key);
  await goTo(page, 'Mailboxes');

  // Wrong credentials: the task fails and the page says what the source server answered.
  await fillImapForm(page, box.address, dovecot.port, 'wrong-secret');
  await waitForText(page, `Import into ${box.address} failed:`);
  const failure = await page.getByRole('alert').filter({ hasText: 'failed:' }).innerText();
  t.regex(failure, /auth|login|credentials/i, failure);
  t.is((await listAll(app, box.key, `mailbox_id=${box.mailboxId}`)).length, 0);

  // The right password: the bar fills to the number of messages and the page says completed.
  await page.getByRole('button', { name: 'Close' }).click();
  await fillImapForm(page, box.address, dovecot.port, 'old-secret');
  const bar = page.getByRole('progressbar', { name: `Import into ${box.address}` });
  await bar.waitFor();
  // value and max reflect as attributes: the bar is full once both name the number of messages.
  await page.locator(`progress[max="${total}"][value="${total}"]`).waitFor({ timeout: TASK_UI_WAIT_MS });
  await waitForText(page, `${total} imported, 0 skipped of ${total} messages`);
  t.regex(await page.getByRole('status').filter({ hasText: 'Import into' }).innerText(), /completed/);
  const panel = page.getByRole('region', { name: `Import mail into ${box.address}` });
  t.is(await panel.getByLabel('Password').inputValue(), '', 'the source password does not stay in the form');
  await page.screenshot({ path: SCREENSHOT });

  // The API lists them in their folders.
  for (const [folder, n] of seeded) {
    const listed = await listAll(app, box.key, `folder=${folder}&mailbox_id=${box.mailboxId}`);
    t.is(listed.length, n, folder);
    t.deepEqual(listed.map((e) => e.subject).sort(), Array.from({ length: n }, (_, i) => `${folder} note ${i}`).sort());
  }
});

test('an mbox file chosen in the import form is uploaded into the folder named', async (t) => {
  t.timeout(120_000);
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, box.key);
  await goTo(page, 'Mailboxes');
  const mbox = [0, 1, 2].map((i) => `From friend${i}@old.example Tue Jan  2 10:00:00 2024\n${message(i, 'Saved').replace(/\r\n/g, '\n')}`).join('\n');

  await page.getByRole('button', { name: `Import into ${box.address}` }).click();
  const panel = page.getByRole('region', { name: `Import mail into ${box.address}` });
  await panel.getByLabel('mbox file').setInputFiles({ name: 'saved.mbox', mimeType: 'application/mbox', buffer: Buffer.from(mbox) });
  await panel.getByLabel('Into folder').fill('Saved');
  await panel.getByRole('button', { name: 'Upload mbox' }).click();
  await panel.locator('progress[max="3"][value="3"]').waitFor({ timeout: TASK_UI_WAIT_MS });
  await waitForText(page, '3 imported, 0 skipped of 3 messages');
  const listed = await listAll(app, box.key, `folder=Saved&mailbox_id=${box.mailboxId}`);
  t.deepEqual(listed.map((e) => e.subject).sort(), ['Saved note 0', 'Saved note 1', 'Saved note 2']);
});
