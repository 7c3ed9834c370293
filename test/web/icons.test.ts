// The dashboard's icons: /favicon.ico and the SVG the page names, and the attachment marker drawn
// as an inline SVG (an emoji shows as an empty box where no emoji font is installed), at 1280 and 390 px.
import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { goTo, newPage, shareBrowser, signIn } from '../helpers/browser.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { sideScroll } from '../helpers/layout.js';

const browser = shareBrowser(test);

test('/favicon.ico is an ICO file and the page names an SVG icon that is served', async (t) => {
  const app = await startTestApp(t);
  const origin = `http://127.0.0.1:${app.httpPort}`;
  const ico = await fetch(`${origin}/favicon.ico`);
  t.is(ico.status, 200);
  t.is(ico.headers.get('content-type'), 'image/x-icon');
  const bytes = Buffer.from(await ico.arrayBuffer());
  t.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], 'the ICO header (reserved 0, type 1: icon)');
  t.true(bytes.readUInt16LE(4) >= 1, 'at least one image');

  const page = await (await fetch(`${origin}/`)).text();
  const linked = [...page.matchAll(/<link rel="icon" href="([^"]+)"([^>]*)>/g)];
  t.deepEqual(linked.map((m) => m[1]), ['/favicon.svg', '/favicon.ico']);
  t.regex(linked[0]![2]!, /type="image\/svg\+xml"/);
  const svg = await fetch(`${origin}/favicon.svg`);
  t.is(svg.status, 200);
  t.is(svg.headers.get('content-type'), 'image/svg+xml');
  t.regex(await svg.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
});

test('a message with attachments is marked by an inline SVG icon with a name, at 1280 and 390 px', async (t) => {
  const app = await startTestApp(t);
  const inbox = await makeInbox(app);
  await deliver(app, inbox.key, inbox.address, {
    subject: 'The numbers', attachments: [{ filename: 'numbers.csv', content_type: 'text/csv', content: Buffer.from('q,amount\n1,100\n').toString('base64') }],
  });
  const [stored] = await waitForEmails(app, inbox.key, 1);
  t.true(stored.has_attachments);

  for (const width of [1280, 390]) {
    const { page, close } = await newPage(browser(), { width });
    try {
      await signIn(page, `http://127.0.0.1:${app.httpPort}`, inbox.key);
      await goTo(page, 'Inbox');
      const row = page.getByRole('list', { name: 'Messages' }).getByRole('button', { name: /The numbers/ });
      await row.waitFor();
      const marker = row.getByRole('img', { name: 'with attachments' });
      t.is(await marker.count(), 1, `${width} px: one named marker`);
      t.is(await marker.locator('svg path').count(), 1, `${width} px: drawn as an SVG path`);
      const box = await marker.boundingBox();
      t.true(box !== null && box.width >= 8 && box.height >= 8, `${width} px: the icon is drawn at text size (${JSON.stringify(box)})`);
      t.false(/\p{Extended_Pictographic}/u.test(await row.innerText()), `${width} px: no emoji in the row`);
      t.is(await sideScroll(page), 0, `${width} px`);
    } finally {
      await close();
    }
  }
});
