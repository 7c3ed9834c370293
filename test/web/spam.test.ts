// The dashboard's spam parts (DECISIONS.md section 18): the verdict and its reasons on an open
// message, with the button that corrects it, and the Spam page of allow and block lists.
import test from 'ava';
import { spamLists } from '../../src/spam/lists.js';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { makeInbox, waitForEmails } from '../helpers/emails.js';
import { whoIs } from '../helpers/mailboxes.js';
import { sendMail } from '../helpers/smtp.js';

const browser = shareBrowser(test);

const message = (from: string, to: string, subject: string) =>
  `From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nDate: Sat, 28 Nov 2026 04:00:00 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@sender.example>\r\n\r\nAn ordinary message.\r\n`;

test('an open message shows its verdict, score, filter and reasons, and offers Junk or Not junk', async (t) => {
  const app = await startTestApp(t);
  const inbox = await makeInbox(app);
  // A block entry makes mail from spammer.example junk with the reason BLOCKLIST.
  const { tenantId } = await whoIs(app, inbox.key);
  await spamLists.add(app.app.db, tenantId, { kind: 'block', pattern: '@spammer.example' }, Date.now());
  await sendMail(app.smtpPort, { from: 'bulk@spammer.example', to: [inbox.address] }, message('Bulk <bulk@spammer.example>', inbox.address, 'Cheap watches'));
  await sendMail(app.smtpPort, { from: 'carol@sender.example', to: [inbox.address] }, message('Carol <carol@sender.example>', inbox.address, 'Lunch on Friday'));
  await waitForEmails(app, inbox.key, 1, '&folder=Junk');
  await waitForEmails(app, inbox.key, 1);

  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Inbox');
  const messages = page.getByRole('list', { name: 'Messages' });
  const pane = page.getByRole('region', { name: 'Message' });

  await messages.getByRole('button', { name: /Lunch on Friday/ }).click();
  await pane.getByRole('heading', { name: 'Lunch on Friday' }).waitFor();
  const hamVerdict = pane.getByRole('region', { name: 'Spam verdict' });
  t.regex(await hamVerdict.innerText(), /Not junk\s+score -?[\d.]+ of [\d.]+ \(builtin filter\)/);
  t.true(await pane.getByRole('button', { name: 'Junk', exact: true }).isVisible());

  await page.getByLabel('Folder').selectOption('Junk');
  await messages.getByRole('button', { name: /Cheap watches/ }).click();
  await pane.getByRole('heading', { name: 'Cheap watches' }).waitFor();
  const junkVerdict = pane.getByRole('region', { name: 'Spam verdict' });
  t.regex(await junkVerdict.innerText(), /^Junk\s+score [\d.]+ of [\d.]+ \(builtin filter\)/);
  t.regex(await junkVerdict.getByRole('list', { name: 'Spam reasons' }).innerText(), /BLOCKLIST \+[\d.]+/);
  t.true(await pane.getByRole('button', { name: 'Not junk', exact: true }).isVisible());
});
