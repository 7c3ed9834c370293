import test from 'ava';
import { pino } from 'pino';
import { startTestApp } from '../helpers/app.js';
import { makeInbox, waitForEmails } from '../helpers/emails.js';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';

test('an active script that fails keeps the message in INBOX and the failure is logged with the mailbox', async (t) => {
  const lines: any[] = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  const app = await startTestApp(t, { logger });
  const { key, address, mailboxId } = await makeInbox(app);
  const put = await app.request('PUT', `/v1/mailboxes/${encodeURIComponent(address)}/sieve/main`, { key, body: { script: 'require ["fileinto", "mailbox"];\nfileinto :create "Away";\n', active: true } });
  t.is(put.status, 200);
  // A script stored by an older version that this engine no longer takes (written behind the API's back).
  await app.app.db.updateTable('sieve_scripts').set({ script: 'this is not sieve', updated_at: Date.now() + 1000 }).execute();
  const from = 'bob@remote.example';
  const raw = `From: <${from}>\r\nTo: <${address}>\r\nSubject: still delivered\r\nMessage-ID: <err.${Date.now()}@remote.example>\r\n\r\nHello.\r\n`;
  await sendMail(app.smtpPort, { from, to: [address] }, raw);
  const inbox = await waitForEmails(app, key, 1);
  t.deepEqual(inbox.map((e: any) => e.subject), ['still delivered']);
  t.is((await app.get('/v1/emails?folder=Away', key)).body.data.length, 0);
  const logged = await waitFor(() => lines.find((l) => l.msg === 'sieve script failed; message kept in INBOX'), 'the failure logged');
  t.is(logged.mailbox_id, mailboxId);
});
