import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imapApp, PASSWORD } from '../helpers/imap.js';
import { deliver, waitForEmails } from '../helpers/emails.js';

const run = promisify(execFile);
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'imaplib-client.py');

test('Python imaplib logs in over IMAPS, lists, selects, searches, fetches and stores', async (t) => {
  t.timeout(120_000);
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address, { subject: 'first one', body_text: 'Grüße aus der Küche' });
  await deliver(app, box.key, box.address, { subject: 'the needle here' });
  await deliver(app, box.key, box.address, { subject: 'third' });
  const emails = await waitForEmails(app, box.key, 3);

  const { stdout } = await run('python3', [SCRIPT, '127.0.0.1', String(imapPort), box.address, PASSWORD, join(app.dataDir, 'tls', 'self-signed.crt')], { timeout: 60_000 });
  const out = JSON.parse(stdout);
  t.is(out.login, 'OK');
  for (const name of ['INBOX', 'Sent', 'Drafts', 'Trash', 'Junk']) t.true(out.list.some((l: string) => l.endsWith(` ${name}`) || l.endsWith(` "${name}"`)), `LIST shows ${name}`);
  t.is(out.exists, 3);
  t.is(out.search.length, 1, 'SUBJECT finds exactly one message');
  t.regex(out.fetch_meta, /FLAGS \((?:\\Recent)?\)/, 'PEEK left the message unread');
  // Sequence number 1 is whichever was stored first: find it by its subject.
  const first = emails.find((e: any) => out.fetch_body.includes(`\r\nSubject: ${e.subject}\r\n`));
  t.truthy(first, 'the fetched message is one of the mailbox\'s');
  const raw = await app.request('GET', `/v1/emails/${first.id}/raw`, { key: box.key });
  t.is(out.fetch_body, raw.body, 'BODY.PEEK[] is the raw message');
  t.true(out.store.some((s: string) => /\\Seen/.test(s) && /\\Flagged/.test(s)));
  t.regex(out.flags_after, /\\Seen/);
  t.is(out.logout, 'BYE');
  const after = await app.get(`/v1/emails/${first.id}`, box.key);
  t.true(after.body.data.is_read);
  t.deepEqual(after.body.data.flags, ['\\Flagged']);
});
