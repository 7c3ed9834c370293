import test from 'ava';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { PRIVATE_HOOKS, startReceiver, subscribeAll, waitFor } from '../helpers/webhooks.js';
import { fixedPort } from '../helpers/ports.js';

const browser = shareBrowser(test);

/** Sends one message over SMTP to the app with nodemailer, as a remote server would. */
async function smtpSend(app: TestClient, mail: SendMailOptions) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: app.smtpPort, secure: false, ignoreTLS: true, name: 'client.example' });
  try { return await transport.sendMail({ from: 'Carol Sender <carol@sender.example>', ...mail }); } finally { transport.close(); }
}

/** `s` as a literal in a regular expression. */
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('mail sent over SMTP appears without a reload; reading, marking read and deleting fire webhooks', async (t) => {
  const port = await fixedPort();
  const app = await startTestApp(t, { env: { ...PRIVATE_HOOKS, MAILSTEAD_HTTP_PORT: String(port), MAILSTEAD_PUBLIC_URL: `http://127.0.0.1:${port}` } });
  const inbox = await makeInbox(app, { count: 2 });
  const receiver = await subscribeAll(t, app, inbox.key);
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Inbox');
  await page.getByText('No messages here.').waitFor();
  await page.evaluate('window.sameDocument = true');
  // The folder filter shows only where the API has folders (its OpenAPI description says so).
  const openapi = (await app.get('/openapi.json')).body;
  const folders = openapi.paths['/api/v1/emails'].get.parameters.some((p: { name: string }) => p.name === 'folder');
  t.is(await page.getByLabel('Folder').isVisible(), folders);

  await smtpSend(app, {
    to: inbox.address, subject: 'Quarterly numbers',
    text: 'Hello Ann,\nthe numbers are attached.', html: '<p>Hello <b>Ann</b>, the numbers are attached.</p>',
    attachments: [{ filename: 'numbers.csv', content: 'q,amount\n1,100\n', contentType: 'text/csv' }],
  });
  await smtpSend(app, { to: inbox.mailboxes[1].address, subject: 'For the other mailbox', text: 'Second mailbox.' });
  const messages = page.getByRole('list', { name: 'Messages' });
  await messages.getByRole('button', { name: /Quarterly numbers/ }).waitFor({ timeout: 60_000 });
  t.true(await page.evaluate<boolean>('window.sameDocument === true'), 'no reload happened');
  t.regex(await messages.getByRole('button', { name: /Quarterly numbers/ }).innerText(), /Carol Sender/);
  await messages.getByRole('button', { name: /For the other mailbox/ }).waitFor({ timeout: 60_000 });
  // By default the list holds the mail of every mailbox; each row names the address it was sent to.
  t.regex(await messages.getByRole('button', { name: /For the other mailbox/ }).innerText(), new RegExp(`to ${escapeRe(inbox.mailboxes[1].address)}`));
  t.regex(await messages.getByRole('button', { name: /Quarterly numbers/ }).innerText(), new RegExp(`to ${escapeRe(inbox.address)}`));

  // The Mailbox selector (its options learnt from the mail) shows one mailbox at a time.
  await page.getByLabel('Mailbox').selectOption({ label: inbox.address });
  await messages.getByRole('button', { name: /For the other mailbox/ }).waitFor({ state: 'detached' });
  t.is(await messages.getByRole('button').count(), 1);
  // Search and the unread filter.
  await page.getByLabel('Search').fill('nothing-like-this');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('No messages here.').waitFor();
  await page.getByLabel('Search').fill('quarterly');
  await page.getByRole('button', { name: 'Apply' }).click();
  await messages.getByRole('button', { name: /Quarterly numbers/ }).click();

  // The reading pane: headers, authentication results, the text part first, HTML on request.
  const pane = page.getByRole('region', { name: 'Message' });
  await pane.getByRole('heading', { name: 'Quarterly numbers' }).waitFor();
  const paneText = await pane.innerText();
  t.regex(paneText, /From\s+Carol Sender <carol@sender\.example>/);
  t.regex(paneText, new RegExp(`To\\s+${escapeRe(inbox.address)}`));
  t.regex(paneText, /SPF: \w+/);
  t.regex(paneText, /DMARC: \w+/);
  t.regex(await pane.locator('pre.mail-text').innerText(), /the numbers are attached/);
  await pane.getByRole('button', { name: 'HTML' }).click();
  const frame = pane.frameLocator('iframe.mail-html');
  t.is(await frame.locator('b').innerText(), 'Ann');
  await pane.getByRole('button', { name: 'Text' }).click();

  // The attachment through its signed link, and the raw source.
  const download = page.waitForEvent('download');
  await pane.getByRole('button', { name: 'Download numbers.csv' }).click();
  const file = await download;
  t.is(file.suggestedFilename(), 'numbers.csv');
  t.regex(file.url(), /\/api\/v1\/attachments\/download\//);
  await pane.getByRole('button', { name: 'Raw source' }).click();
  // The source is fetched on click and shown when it has arrived: wait for it to be visible, not only attached.
  const rawSource = pane.getByLabel('Raw source');
  await rawSource.waitFor({ state: 'visible' });
  t.regex(await rawSource.innerText(), /Subject: Quarterly numbers/);

  // Mark as read: the webhook receiver hears email.read.
  const emailId = (await app.get(`/v1/emails?mailbox_id=${inbox.mailboxId}`, inbox.key)).body.data[0].id;
  await pane.getByRole('button', { name: 'Mark as read' }).click();
  await pane.getByText('Marked as read.').waitFor();
  const read = (await waitFor(() => receiver.requests.find((r) => r.body?.event === 'email.read'), 'email.read', 60_000))!;
  t.deepEqual(read.body.data, { email_id: emailId, mailbox_id: inbox.mailboxId });
  t.is(await pane.getByRole('button', { name: 'Mark as read' }).count(), 0);

  // Delete (confirmed): email.deleted, and the message leaves the list.
  await pane.getByRole('button', { name: 'Delete' }).click();
  await pane.getByText('The message was deleted.').waitFor();
  const deleted = (await waitFor(() => receiver.requests.find((r) => r.body?.event === 'email.deleted'), 'email.deleted', 60_000))!;
  t.deepEqual(deleted.body.data, { email_id: emailId, mailbox_id: inbox.mailboxId });
  await messages.getByRole('button', { name: /Quarterly numbers/ }).waitFor({ state: 'detached' });
  t.is((await app.get(`/v1/emails/${emailId}`, inbox.key)).status, 404);
});

test('HTML mail runs no script and loads no remote image until asked', async (t) => {
  const app = await startTestApp(t);
  const inbox = await makeInbox(app);
  const images = await startReceiver(t);
  const base = `http://127.0.0.1:${images.port}`;
  await smtpSend(app, {
    to: inbox.address, subject: 'Tracking pixel inside',
    html: `<html><head><script>fetch('${base}/script-ran'); parent.document.title = 'owned';</script></head>`
      + `<body><p id="body">Look at this</p><img alt="pixel" src="${base}/pixel.png">`
      + `<img alt="broken" src="x" onerror="fetch('${base}/onerror-ran')">`
      + `<div style="background:url(${base}/background.png)">styled</div>`
      + `<a href="javascript:fetch('${base}/link-ran')">click</a></body></html>`,
  });
  await waitFor(async () => (await app.get('/v1/emails', inbox.key)).body.data.length === 1, 'the stored email', 60_000);

  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Inbox');
  await page.getByRole('list', { name: 'Messages' }).getByRole('button', { name: /Tracking pixel inside/ }).click();
  const pane = page.getByRole('region', { name: 'Message' });
  // The text part (mailparser derives one from the HTML) shows first; HTML on request.
  await pane.getByRole('button', { name: 'HTML' }).click();
  const frameEl = pane.locator('iframe.mail-html');
  await frameEl.waitFor();
  const sandbox = await frameEl.getAttribute('sandbox');
  t.false((sandbox ?? '').includes('allow-scripts'));
  t.false((sandbox ?? '').includes('allow-same-origin'));
  const frame = pane.frameLocator('iframe.mail-html');
  t.is(await frame.locator('#body').innerText(), 'Look at this');
  t.regex(await pane.innerText(), /1 remote image was blocked/);
  // Absence cannot be polled for: the frame has loaded (its images would have been fetched by
  // then) and a script would have run at once; a short grace period covers a slow fetch.
  await page.waitForTimeout(1500);
  t.deepEqual(images.requests.map((r) => r.path), []);
  t.not(await page.title(), 'owned');
  t.is(await frame.locator('a').getAttribute('href'), null);

  await pane.getByRole('button', { name: 'Show remote images' }).click();
  await images.waitForCount(1, 60_000);
  const paths = images.requests.map((r) => r.path);
  t.true(paths.includes('/pixel.png'));
  t.false(paths.some((p) => p.endsWith('-ran')), paths.join(' '));
  t.not(await page.title(), 'owned');
});

test('the Mailbox selector offers the mailboxes of earlier mail, not only of the first page', async (t) => {
  // The server's clock runs an hour behind the browser's, so the live poll (which asks for changes
  // from the last minute of the browser's time) sees none of this mail: only the walk of the sync
  // feed from its beginning can name the second mailbox.
  const app = await startTestApp(t, { clock: { now: () => Date.now() - 3_600_000 } });
  const inbox = await makeInbox(app, { count: 2 });
  const [first, second] = inbox.mailboxes;
  // The oldest message goes to the second mailbox; 25 newer ones (a whole first page) to the first.
  await deliver(app, inbox.key, second!.address, { subject: 'Old news for the second mailbox' });
  for (let i = 0; i < 25; i++) await deliver(app, inbox.key, first!.address, { subject: `Newer ${i}` });
  await waitForEmails(app, inbox.key, 26, '', 60_000);

  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
  await goTo(page, 'Inbox');
  const messages = page.getByRole('list', { name: 'Messages' });
  await messages.getByRole('button', { name: /Newer 24/ }).waitFor();
  t.is(await messages.getByRole('button', { name: /Old news/ }).count(), 0, 'the old message is not on the first page');

  const select = page.getByLabel('Mailbox');
  await select.getByRole('option', { name: second!.address }).waitFor({ state: 'attached' });
  t.deepEqual(await select.getByRole('option').allTextContents(), ['All mailboxes', first!.address, second!.address]);
  await select.selectOption({ label: second!.address });
  await messages.getByRole('button', { name: /Old news for the second mailbox/ }).waitFor();
  await messages.getByRole('button', { name: /Newer 24/ }).waitFor({ state: 'detached' });
  t.is(await messages.getByRole('button').count(), 1);
  t.regex(await messages.getByRole('button').innerText(), new RegExp(`to ${escapeRe(second!.address)}`));

  await select.selectOption({ label: 'All mailboxes' });
  await messages.getByRole('button', { name: /Newer 24/ }).waitFor();
  t.is(await messages.getByRole('button', { name: /Newer/ }).count(), 25);
});
