// Folders made over IMAP open in the dashboard's inbox: the Folder selector offers the standard five
// and every other folder the API shows mail in (DECISIONS.md section 14), per chosen mailbox, at
// 1280 and 390 px.
import test from 'ava';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, imapClient } from '../helpers/imap.js';
import { sideScroll } from '../helpers/layout.js';

const browser = shareBrowser(test);
const STANDARD = ['INBOX', 'Sent', 'Drafts', 'Trash', 'Junk'];

/** A message as a mail client appends it. */
const raw = (to: string, subject: string) => Buffer.from(`From: Dan <dan@sender.example>\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@sender.example>\r\nDate: Fri, 27 Nov 2026 10:00:00 +0000\r\n\r\nFiled by hand.\r\n`);

test('folders created over IMAP are offered and open in the inbox, per mailbox', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { count: 2 });
  const [ann, bob] = box.mailboxes;
  // Each mailbox: one delivered message (the Mailbox selector learns the address from it) and a
  // folder of its own made and filled over IMAP, one of them nested.
  for (const [mailbox, folder, subject] of [[ann!, 'Projects/2026', 'Plan for 2026'], [bob!, 'Receipts', 'Receipt 118']] as const) {
    await deliver(app, box.key, mailbox.address, { subject: `Hello ${mailbox.address}` });
    const client = await imapClient(t, imapPort, mailbox.address);
    await client.mailboxCreate(folder);
    await client.append(folder, raw(mailbox.address, subject), ['\\Seen']);
    await client.logout();
  }
  await waitForEmails(app, box.key, 1, `&folder=${encodeURIComponent('Projects/2026')}`);
  await waitForEmails(app, box.key, 1, '&folder=Receipts');

  for (const width of [1280, 390]) {
    const { page, close } = await newPage(browser(), { width });
    try {
      await signIn(page, `http://127.0.0.1:${app.httpPort}`, box.key);
      await goTo(page, 'Inbox');
      const folder = page.getByLabel('Folder');
      const messages = page.getByRole('list', { name: 'Messages' });
      await messages.getByRole('button', { name: new RegExp(`Hello ${ann!.address.replace(/\./g, '\\.')}`) }).waitFor();
      // Every mailbox's folders while all mailboxes are shown.
      await folder.getByRole('option', { name: 'Receipts' }).waitFor({ state: 'attached' });
      await folder.getByRole('option', { name: 'Projects/2026' }).waitFor({ state: 'attached' });
      t.deepEqual(await folder.getByRole('option').allTextContents(), [...STANDARD, 'Projects/2026', 'Receipts'], `${width} px`);

      await folder.selectOption('Projects/2026');
      await messages.getByRole('button', { name: /Plan for 2026/ }).waitFor();
      t.is(await messages.getByRole('button').count(), 1, `${width} px: only the folder's mail`);
      await messages.getByRole('button', { name: /Plan for 2026/ }).click();
      await page.getByRole('region', { name: 'Message' }).getByRole('heading', { name: 'Plan for 2026' }).waitFor();
      t.regex(await page.getByRole('region', { name: 'Message' }).innerText(), /Folder\s+Projects\/2026/);
      t.is(await sideScroll(page), 0, `${width} px`);

      // One mailbox chosen: its own folders (the one chosen stays offered, listing nothing there).
      await page.getByLabel('Mailbox').selectOption({ label: bob!.address });
      await messages.getByText('No messages here.').waitFor();
      t.deepEqual(await folder.getByRole('option').allTextContents(), [...STANDARD, 'Projects/2026', 'Receipts'], `${width} px: the chosen folder stays`);
      await folder.selectOption('Receipts');
      await messages.getByRole('button', { name: /Receipt 118/ }).waitFor();
      await page.waitForFunction("!/Projects/.test(document.querySelector('select[name=folder]').textContent)");
      t.deepEqual(await folder.getByRole('option').allTextContents(), [...STANDARD, 'Receipts'], `${width} px: ${bob!.address}'s folders`);
    } finally {
      await close();
    }
  }
});
