import test from 'ava';
import { IDLE_POLL_MS } from '../../src/imap/idle-watch.js';
import { waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { sendMail } from '../helpers/smtp.js';

/*
 * IDLE hears of a change committed in this process at once (the ingest commit, API and IMAP
 * changes wake the mailbox's idling sessions); the poll is only the fallback for changes made by
 * other processes. The tests set the poll to a minute, so what arrives in under a second came by
 * the wake-up.
 */

const SLOW_POLL_MS = 60_000;
/** Well under the 1 s DECISIONS.md section 14 allows, and far below the slowed poll, on a loaded 2-core host. */
const PROMPT_MS = 1000;

/** A logged-in connection idling in INBOX; answers where its IDLE output starts. */
async function idling(c: RawImap, address: string): Promise<number> {
  await c.cmd('a', `LOGIN ${address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  const from = c.text().length;
  c.send('i IDLE\r\n');
  await c.until(/^\+ /, 15_000, from);
  return from;
}

/** Milliseconds from `start` until a line matching `re` is seen after `from`. */
async function msUntil(c: RawImap, re: RegExp, from: number, start: number): Promise<number> {
  await c.until(re, 30_000, from);
  return Date.now() - start;
}

test('the fallback poll is well inside the 1 s allowed for changes made by other processes', (t) => {
  t.true(IDLE_POLL_MS <= 500);
});

test('an IDLE client sees EXISTS promptly after the SMTP 250, with the poll slowed to a minute', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  // The first delivery starts the storage thread (seconds under tsx): not what is measured here.
  await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, `From: a@client.example\r\nSubject: warm\r\nMessage-ID: <warm-${Date.now()}@client.example>\r\n\r\nx\r\n`);
  await waitForEmails(app, box.key, 1, '', 60_000);
  app.app.imap.idle.pollMs = SLOW_POLL_MS;
  const c = await rawImap(t, imapPort);
  const from = await idling(c, box.address);
  const latencies: number[] = [];
  for (let i = 2; i <= 4; i++) {
    const mark = c.text().length;
    const raw = `From: a@client.example\r\nTo: ${box.address}\r\nSubject: wake ${i}\r\nMessage-ID: <wake-${i}-${Date.now()}@client.example>\r\n\r\nhello\r\n`;
    await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, raw);
    latencies.push(await msUntil(c, new RegExp(`^\\* ${i} EXISTS`), mark, Date.now()));
  }
  t.log(`SMTP 250 to EXISTS: ${latencies.join(', ')} ms`);
  for (const ms of latencies) t.true(ms < PROMPT_MS, `EXISTS ${ms} ms after the 250`);
  await waitForEmails(app, box.key, 4);
  c.send('DONE\r\n');
  await c.until(/^i OK IDLE terminated/, 15_000, from);
});

test('API reads and deletes and another session\'s STORE wake an idling session at once', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 3; i++) {
    await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, `From: a@client.example\r\nSubject: m${i}\r\nMessage-ID: <faces-${i}-${Date.now()}@client.example>\r\n\r\nx\r\n`);
  }
  const items = (await waitForEmails(app, box.key, 3, '', 60_000)).sort((a, b) => a.id - b.id);
  app.app.imap.idle.pollMs = SLOW_POLL_MS;
  const c = await rawImap(t, imapPort);
  await idling(c, box.address);

  let mark = c.text().length;
  let start = Date.now();
  t.is((await app.post(`/v1/emails/${items[0].id}/read`, box.key)).status, 200);
  t.true(await msUntil(c, /^\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\\Seen\)\)/, mark, start) < PROMPT_MS, 'an API read');

  const other = await rawImap(t, imapPort);
  await other.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await other.cmd('b', 'SELECT INBOX');
  mark = c.text().length;
  start = Date.now();
  await other.cmd('c', 'UID STORE 2 +FLAGS.SILENT (\\Flagged)');
  t.true(await msUntil(c, /^\* 2 FETCH \(UID 2 FLAGS \((?:\\Recent )?\\Flagged\)\)/, mark, start) < PROMPT_MS, 'another session\'s STORE');

  mark = c.text().length;
  start = Date.now();
  t.is((await app.del(`/v1/emails/${items[2].id}`, box.key)).status, 200);
  t.true(await msUntil(c, /^\* 3 EXPUNGE/, mark, start) < PROMPT_MS, 'an API delete');
});

test('a change made outside this process (straight into the database) is announced by the poll', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, `From: a@client.example\r\nSubject: outside\r\nMessage-ID: <outside-${Date.now()}@client.example>\r\n\r\nx\r\n`);
  const [item] = await waitForEmails(app, box.key, 1, '', 60_000);
  app.app.imap.idle.pollMs = 200;
  const c = await rawImap(t, imapPort);
  const from = await idling(c, box.address);
  // As another process (the CLI, another node) writes: a new change marker, and no word to this one.
  const markers = app.app.emails.markers;
  await markers.ready(app.app.db);
  await app.app.db.updateTable('emails').set({ flags: '$Outside', updated_seq: markers.next() }).where('id', '=', item.id).execute();
  await c.until(/^\* 1 FETCH \(UID 1 FLAGS \((?:\\Recent )?\$Outside\)\)/, 15_000, from);
  t.pass();
});

test('IDLE announces mail delivered over SMTP within a second of it being stored', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  const from = c.text().length;
  c.send('i IDLE\r\n');
  await c.until(/^\+ /, 15_000, from);
  let existsAt = 0;
  const watch = c.until(/^\* 1 EXISTS/, 60_000, from).then(() => { existsAt = Date.now(); });
  const raw = `From: a@client.example\r\nTo: ${box.address}\r\nSubject: idle test\r\nMessage-ID: <idle-${Date.now()}@client.example>\r\n\r\nhello\r\n`;
  await sendMail(app.smtpPort, { from: 'a@client.example', to: [box.address] }, raw);
  await waitForEmails(app, box.key, 1, '', 60_000);
  const storedSeenAt = Date.now();
  await watch;
  t.true(existsAt - storedSeenAt < 1000, `EXISTS came ${existsAt - storedSeenAt} ms after the API listed the mail`);
  const end = c.text().length;
  c.send('DONE\r\n');
  await c.until(/^i OK IDLE terminated/, 15_000, end);
  t.pass();
});
