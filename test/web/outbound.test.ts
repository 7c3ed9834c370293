import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';

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

test('the outbound page lists items in the shapes of DECISIONS.md section 12 and retries one', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const { page, close } = await newPage(browser());
  t.teardown(close);
  const hasQueue = (await app.get('/v1/outbound', key)).status !== 404;
  // Without the queue on this server, its two endpoints are answered in the browser with section
  // 12's shapes (the real component cannot run here); with it, the real server answers.
  const retried: string[] = [];
  if (!hasQueue) {
    const now = new Date().toISOString();
    const item = (id: number, status: string, last: string | null) => ({
      id, kind: 'forward', email_id: 7, mail_from: 'SRS0=abcd=AA=a.example=x@fw.example', rcpt_to: `r${id}@far.example`, status,
      attempts: 3, next_attempt_at: status === 'queued' ? now : null, last_response: last, created_at: now, updated_at: now,
    });
    await page.route('**/api/v1/outbound?*', (route) => route.fulfill({ json: {
      data: [item(2, 'failed', '550 5.1.1 no such user'), item(1, 'sent', '250 ok')], meta: { next_cursor: null, prev_cursor: null, per_page: 25 },
    } }));
    await page.route('**/api/v1/outbound/*/retry', (route) => { retried.push(route.request().url()); return route.fulfill({ json: { status: 'success' } }); });
  }
  await signIn(page, `http://127.0.0.1:${app.httpPort}`, key);
  await goTo(page, 'Outbound');
  if (hasQueue) {
    await page.getByText('Nothing in the outbound queue.').waitFor();
    t.pass('the real queue is empty for a new tenant');
    return;
  }
  const table = page.getByRole('region', { name: 'Outbound queue' });
  await table.waitFor();
  t.regex(await table.innerText(), /r2@far\.example\s+forward\s+failed\s+3/);
  t.regex(await table.innerText(), /550 5\.1\.1 no such user/);
  t.is(await page.getByRole('button', { name: 'Retry delivery to r1@far.example' }).count(), 0, 'a sent item has no retry');
  await page.getByRole('button', { name: 'Retry delivery to r2@far.example' }).click();
  await page.getByText('Delivery to r2@far.example is being tried again.').waitFor();
  t.is(retried.length, 1);
  t.regex(retried[0], /\/api\/v1\/outbound\/2\/retry$/);
});
