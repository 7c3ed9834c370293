import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, waitForItems } from '../outbound/world.js';

const browser = shareBrowser(test);

test('the outbound page says so when the server has no outbound queue', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const { page, close } = await newPage(browser());
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  const hasQueue = (await app.get('/v1/outbound', key)).status !== 404;
  await goTo(page, 'Outbound');
  if (hasQueue) {
    // A server with the queue of DECISIONS.md section 12 and nothing queued yet.
    await page.getByText('Nothing in the outbound queue.').waitFor();
    t.true(await page.getByLabel('Status').isVisible());
  } else {
    const state = page.getByRole('status').filter({ hasText: 'The outbound queue is not available on this server' });
    await state.waitFor();
    t.true(await state.isVisible());
  }
});

/** A remote refusal as Postfix words it: long enough to crowd the table's other columns. */
const REFUSAL = '550 5.1.1 <gone@remote.test>: Recipient address rejected: User unknown in virtual mailbox table';

test('the outbound page lists real queue items at 1280 px, its Retry button on one line, and retries one', async (t) => {
  // A forwarder to two remote addresses: the sink refuses one for good (failed) and takes the other (sent).
  const { app, key, sink } = await startWorld(t, {
    answer: (rcpt) => (rcpt.startsWith('gone') ? REFUSAL : null),
    aliases: { [`fwd@${ALIAS_DOMAIN}`]: [`gone@${REMOTE_DOMAIN}`, `ok@${REMOTE_DOMAIN}`] },
    env: { MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: '3600' },
  });
  const sender = `ann@${REMOTE_DOMAIN}`;
  await sendMail(app.smtpPort, { from: sender, to: [`fwd@${ALIAS_DOMAIN}`] }, message(sender, `fwd@${ALIAS_DOMAIN}`, 'retry me'));
  await waitForItems(app, key, (items) => items.some((i) => i.rcpt_to === `gone@${REMOTE_DOMAIN}` && i.status === 'failed') && items.some((i) => i.rcpt_to === `ok@${REMOTE_DOMAIN}` && i.status === 'sent'), 'one failed and one sent item');

  const { page, close } = await newPage(browser(), { width: 1280 });
  t.teardown(close);
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await goTo(page, 'Outbound');
  const table = page.getByRole('region', { name: 'Outbound queue' });
  await table.waitFor();
  t.regex(await table.innerText(), /gone@remote\.test\s+forward\s+failed\s+1/);
  t.regex(await table.innerText(), /Recipient address rejected/);
  t.is(await page.getByRole('button', { name: `Retry delivery to ok@${REMOTE_DOMAIN}` }).count(), 0, 'a sent item has no retry');

  // The button's text is one line: one line box, and the height of a one-line button (Sign out).
  const retry = page.getByRole('button', { name: `Retry delivery to gone@${REMOTE_DOMAIN}` });
  // (The page's document, loosely typed: the tests compile without the DOM library.)
  const lines = await retry.evaluate((b) => {
    const range = (globalThis as unknown as { document: { createRange(): any } }).document.createRange();
    range.selectNodeContents(b);
    return range.getClientRects().length as number;
  });
  t.is(lines, 1, 'Retry is not wrapped');
  const box = await retry.boundingBox();
  const oneLine = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
  t.truthy(box && oneLine);
  t.true(Math.abs(box!.height - oneLine!.height) < 1, `Retry ${box!.height} px high, a one-line button ${oneLine!.height} px`);
  t.true(box!.width >= oneLine!.height, `Retry ${box!.width} px wide`);

  // Retrying it tries the remote again now (it refuses again: a second attempt, failed again).
  await retry.click();
  await page.getByText(`Delivery to gone@${REMOTE_DOMAIN} is being tried again.`).waitFor();
  await waitForItems(app, key, (items) => items.some((i) => i.rcpt_to === `gone@${REMOTE_DOMAIN}` && i.attempts === 2 && i.status === 'failed'), 'the retried item tried again');
  t.true(sink.rcptSeen.filter((r) => r === `gone@${REMOTE_DOMAIN}`).length >= 2);
});
