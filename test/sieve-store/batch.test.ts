import test from 'ava';
import { sendMail } from '../helpers/smtp.js';
import { waitForEmails } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld } from '../outbound/world.js';

// The filter step reads a mailbox's script, vacation, address and folders once per storage batch
// (src/sieve-store/batch-lookups.ts). Mail sent together is stored in few batches: every message must
// still be filed as its script says, a folder one message creates must serve the next, and a script
// changed or deactivated between deliveries must apply to the next message.

const BOX = `ann@${ALIAS_DOMAIN}`;
const SENDER = `bob@${REMOTE_DOMAIN}`;
const send = (port: number, subject: string) => sendMail(port, { from: SENDER, to: [BOX] }, message(SENDER, BOX, subject));

test('mail sent together is filed by the script, into a folder created once; a replaced or deactivated script applies to the next message', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['ann'], aliases: {}, env: { MAILSTEAD_LOG_LEVEL: 'silent' } });
  const put = async (script: string) => {
    const r = await app.request('PUT', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/main`, { key, body: { script, active: true } });
    if (r.status !== 200) throw new Error(`PUT script: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await put('require ["fileinto", "mailbox"];\nif header :contains "subject" "batch" { fileinto :create "Batch"; stop; }\n');

  // Sent at once: several share a storage batch; the first creates Batch, the rest find it.
  const subjects = Array.from({ length: 8 }, (_, i) => `batch ${i}`);
  await Promise.all([...subjects, 'plain together'].map((s) => send(app.smtpPort, s)));
  const filed = await waitForEmails(app, key, subjects.length, 'folder=Batch');
  t.deepEqual(filed.map((e: any) => e.subject).sort(), subjects);
  t.deepEqual((await waitForEmails(app, key, 1)).map((e: any) => e.subject), ['plain together']);
  const batchFolders = await app.app.db.selectFrom('folders').select('name').where('name', '=', 'Batch').execute();
  t.is(batchFolders.length, 1);

  // Another script: the next message is filed by it, not by the one read for an earlier batch.
  await put('require ["fileinto", "mailbox"];\nif header :contains "subject" "batch" { fileinto :create "Second"; stop; }\n');
  await send(app.smtpPort, 'batch after change');
  t.deepEqual((await waitForEmails(app, key, 1, 'folder=Second')).map((e: any) => e.subject), ['batch after change']);

  // Deactivated: kept into INBOX.
  const off = await app.request('POST', `/v1/mailboxes/${encodeURIComponent(BOX)}/sieve/deactivate`, { key });
  t.is(off.status, 200);
  await send(app.smtpPort, 'batch after deactivate');
  const inbox = await waitForEmails(app, key, 2);
  t.deepEqual(inbox.map((e: any) => e.subject).sort(), ['batch after deactivate', 'plain together']);
  t.is((await app.get('/v1/emails?folder=Batch', key)).body.data.length, subjects.length);
});
