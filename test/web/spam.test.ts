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

  // "Not junk" moves it to the inbox (the API's not-junk: $NotJunk, trained); the pane shows it there.
  await pane.getByRole('button', { name: 'Not junk', exact: true }).click();
  await pane.getByText(/Moved to the inbox/).waitFor();
  await pane.getByRole('button', { name: 'Junk', exact: true }).waitFor();
  const moved = (await app.get('/v1/emails?folder=INBOX&per_page=100', inbox.key)).body.data.find((e: { subject: string }) => e.subject === 'Cheap watches');
  t.is(moved?.folder, 'INBOX');
  // And "Junk" sends the other one to Junk.
  await page.getByLabel('Folder').selectOption('INBOX');
  await messages.getByRole('button', { name: /Lunch on Friday/ }).click();
  await pane.getByRole('heading', { name: 'Lunch on Friday' }).waitFor();
  await pane.getByRole('button', { name: 'Junk', exact: true }).click();
  await pane.getByText(/Moved to Junk/).waitFor();
  const junked = await waitForEmails(app, inbox.key, 1, '&folder=Junk');
  t.deepEqual(junked.map((e) => e.subject), ['Lunch on Friday']);
});

test('the Spam page lists, adds and removes allow and block entries; a bad pattern is explained', async (t) => {
  const app = await startTestApp(t);
  const inbox = await makeInbox(app);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Spam');
  await page.getByText('No allow or block entries yet.').waitFor();

  await page.getByLabel('List', { exact: true }).selectOption('block');
  await page.getByLabel('Sender', { exact: true }).fill('@spammer.example');
  await page.getByRole('button', { name: 'Add entry' }).click();
  const lists = page.getByRole('table', { name: 'Allow and block lists' });
  await lists.getByRole('cell', { name: '@spammer.example', exact: true }).waitFor();

  await page.getByLabel('List', { exact: true }).selectOption('allow');
  await page.getByLabel('Sender', { exact: true }).fill('boss@partner.example');
  await page.getByLabel('Mailbox', { exact: true }).fill(inbox.address);
  await page.getByRole('button', { name: 'Add entry' }).click();
  await lists.getByRole('cell', { name: 'boss@partner.example', exact: true }).waitFor();
  const entries = (await app.get('/v1/spam/lists', inbox.key)).body.data;
  t.deepEqual(entries.map((e: any) => [e.kind, e.pattern, e.mailbox]), [['block', '@spammer.example', null], ['allow', 'boss@partner.example', inbox.address]]);

  await page.getByLabel('Sender', { exact: true }).fill('not a pattern');
  await page.getByRole('button', { name: 'Add entry' }).click();
  await page.getByRole('alert').filter({ hasText: /pattern/i }).waitFor();

  await page.getByRole('button', { name: 'Remove @spammer.example from the block list' }).click();
  await lists.getByRole('cell', { name: '@spammer.example', exact: true }).waitFor({ state: 'detached' });
  t.deepEqual((await app.get('/v1/spam/lists', inbox.key)).body.data.map((e: any) => e.pattern), ['boss@partner.example']);
});
