// The outbound queue and the webhook tables at a desktop's 1280 px and a phone's 390 px: a cell's
// text breaks lines only between words (issue 44 saw "Statu/s", "someone@outside.t/est" and "I/D"),
// headers read on one line, and a table wider than the screen scrolls inside its own box, never the page.
import test from 'ava';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { crowdedHeaders, midWordBreaks, sideScroll } from '../helpers/layout.js';
import { sendMail } from '../helpers/smtp.js';
import { createWebhook, deliveriesOf, PRIVATE_HOOKS, startReceiver, waitFor } from '../helpers/webhooks.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, outboundItems, startWorld } from '../outbound/world.js';

const browser = shareBrowser(test);

/** A remote refusal as Postfix words it, long enough to crowd the other columns. */
const REFUSAL = '550 5.1.1 <gone@remote.test>: Recipient address rejected: User unknown in virtual mailbox table';

test('outbound and webhook tables break lines only between words at 1280 and 390 px', async (t) => {
  // An alias that keeps a copy in a mailbox (email.received for the webhook) and forwards two:
  // one the remote refuses for good (failed), one it takes (sent).
  const far = `someone.with.a.long.address@${REMOTE_DOMAIN}`;
  const { app, key } = await startWorld(t, {
    answer: (rcpt) => (rcpt.startsWith('gone') ? REFUSAL : null),
    mailboxes: ['ann'],
    aliases: { [`team@${ALIAS_DOMAIN}`]: [`ann@${ALIAS_DOMAIN}`, `gone@${REMOTE_DOMAIN}`, far] },
    env: { ...PRIVATE_HOOKS, MAILSTEAD_OUTBOUND_RETRY_SCHEDULE: '3600' },
  });
  const receiver = await startReceiver(t);
  const hook = await createWebhook(app, key, { url: `${receiver.url}/hooks/mail/received`, events: ['email.received', 'email.read', 'email.deleted'] });
  const sender = `carol@${REMOTE_DOMAIN}`;
  await sendMail(app.smtpPort, { from: sender, to: [`team@${ALIAS_DOMAIN}`] }, message(sender, `team@${ALIAS_DOMAIN}`, 'tables'));
  await waitFor(async () => {
    const items = await outboundItems(app, key);
    return items.some((i) => i.status === 'failed') && items.some((i) => i.rcpt_to === far && i.status === 'sent');
  }, 'one failed and one sent outbound item', 60_000);
  await waitFor(async () => (await deliveriesOf(app, key, hook.id)).some((d) => d.status === 'delivered'), 'a delivered webhook call', 60_000);

  for (const width of [1280, 390]) {
    const { page, close } = await newPage(browser(), { width, height: 900 });
    try {
      await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
      await goTo(page, 'Outbound');
      const queue = page.getByRole('region', { name: 'Outbound queue' });
      await queue.getByText(far).waitFor();
      t.deepEqual(await midWordBreaks(queue), [], `${width} px: outbound queue`);
      t.deepEqual(await crowdedHeaders(queue), [], `${width} px: outbound headers`);
      t.is(await sideScroll(page), 0, `${width} px: the outbound page itself does not scroll sideways`);

      await goTo(page, 'Webhooks');
      const hooks = page.getByRole('region', { name: 'Webhooks', exact: true });
      await hooks.getByText(`${receiver.url}/hooks/mail/received`).waitFor();
      await page.getByRole('button', { name: `Deliveries of webhook ${hook.id}` }).click();
      const log = page.getByRole('region', { name: `Deliveries of webhook ${hook.id}` });
      await log.getByText('email.received').waitFor();
      for (const [name, table] of [['webhooks', hooks], ['deliveries', log]] as const) {
        t.deepEqual(await midWordBreaks(table), [], `${width} px: ${name}`);
        t.deepEqual(await crowdedHeaders(table), [], `${width} px: ${name} headers`);
      }
      t.is(await sideScroll(page), 0, `${width} px: the webhooks page itself does not scroll sideways`);
      if (width === 390) {
        // Too wide for a phone: the table scrolls inside its own box.
        t.true(await hooks.evaluate((el) => el.scrollWidth > el.clientWidth), 'the webhooks table scrolls inside itself');
      }
    } finally {
      await close();
    }
  }
});
