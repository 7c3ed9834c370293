import test from 'ava';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { appendRaw, imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { legacyPoll, legacyPost } from '../helpers/legacy.js';
import { poll } from '../helpers/poll.js';

/*
 * QUOTA (RFC 9208): a mailbox with a quota has one root "" whose STORAGE is used and limit in KiB
 * ("<n>MB" is n x 1,024 KiB, DECISIONS.md section 14); an unlimited one has no root. Quotas are
 * set through the API: SETQUOTA is refused.
 */

/** A mailbox of the box's domain created through the API with `quota_mb`; answers a logged-in raw session. */
async function mailboxWithQuota(t: Parameters<typeof rawImap>[0], app: Awaited<ReturnType<typeof imapApp>>['app'], key: string, domain: string, local: string, quotaMb: number, port: number): Promise<RawImap> {
  const r = await legacyPost(app, '/create/mailbox/single', key, { Email_fullname: local, single_bulk: 'single', Domain: domain, Params: { password: PASSWORD, quota_mb: quotaMb } });
  t.is(r.status, 200, JSON.stringify(r.body));
  const done = await legacyPoll(app, '/get/mailbox/single', key, r.body.task_id);
  t.is(done.body.status, 'completed', JSON.stringify(done.body));
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${local}@${domain} ${PASSWORD}`), /^l OK/m);
  return c;
}

const storage = (reply: string) => {
  const m = /^\* QUOTA "" \(STORAGE (\d+) (\d+)\)/m.exec(reply);
  return m ? { used: Number(m[1]), limit: Number(m[2]) } : null;
};

test('GETQUOTAROOT and GETQUOTA report STORAGE in KiB against the quota set through the API; usage grows with APPEND and delivery and shrinks with EXPUNGE', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await mailboxWithQuota(t, app, box.key, box.domain, 'limited', 2, imapPort);
  const root = await c.cmd('a', 'GETQUOTAROOT INBOX');
  t.regex(root, /^\* QUOTAROOT INBOX ""\r\n\* QUOTA "" \(STORAGE 0 2048\)\r\na OK/m, '2MB is 2,048 KiB, nothing used');
  t.regex(await c.cmd('b', 'GETQUOTAROOT Sent'), /^\* QUOTAROOT Sent ""/m, 'one root for every folder');
  t.regex(await c.cmd('c', 'GETQUOTAROOT Nowhere'), /^c NO/m, 'no such folder');

  const msg = `From: a@x.example\r\nSubject: sized\r\n\r\n${'x'.repeat(5000)}\r\n`;
  t.regex(await appendRaw(c, 'p1', 'INBOX', msg), /^p1 OK/);
  t.deepEqual(storage(await c.cmd('d', 'GETQUOTA ""')), { used: Math.ceil(msg.length / 1024), limit: 2048 }, 'the appended bytes, rounded up to KiB');

  await deliver(app, box.key, `limited@${box.domain}`, { body_text: 'y'.repeat(8000) });
  let n = 0;
  // Delivery is stored in its own time: the quota line is polled until it shows it.
  const after = await poll('usage after the delivery', async () => {
    const q = storage(await c.cmd(`e${n++}`, 'GETQUOTA ""'));
    return q && q.used >= Math.ceil(msg.length / 1024) + 8 ? q : undefined;
  }, { timeoutMs: 30_000 });
  t.is(after!.limit, 2048);

  t.regex(await c.cmd('s', 'SELECT INBOX'), /^s OK/m);
  t.regex(await c.cmd('x', 'UID STORE 1 +FLAGS.SILENT (\\Deleted)'), /^x OK/m);
  t.regex(await c.cmd('y', 'UID EXPUNGE 1'), /^\* 1 EXPUNGE/m, 'the appended message goes');
  const freed = storage(await c.cmd('z', 'GETQUOTA ""'));
  t.true(freed !== null && freed.used < after!.used, `the expunge freed its bytes: ${JSON.stringify(freed)} after ${JSON.stringify(after)}`);
});

test('an unlimited mailbox has no quota root; GETQUOTA of any root is NO [NONEXISTENT]; SETQUOTA is refused [NOPERM]', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  await deliver(app, box.key, box.address);
  await waitForEmails(app, box.key, 1);
  const c = await rawImap(t, imapPort);
  t.regex(await c.cmd('p', 'GETQUOTAROOT INBOX'), /^p BAD log in first/m);
  t.regex(await c.cmd('l', `LOGIN ${box.address} ${PASSWORD}`), /^l OK/m);
  const root = await c.cmd('a', 'GETQUOTAROOT INBOX');
  t.regex(root, /^\* QUOTAROOT INBOX\r\na OK/m, 'no root');
  t.notRegex(root, /\* QUOTA /);
  t.regex(await c.cmd('b', 'GETQUOTA ""'), /^b NO \[NONEXISTENT\]/m);
  t.regex(await c.cmd('c', 'GETQUOTA "other"'), /^c NO \[NONEXISTENT\]/m);
  t.regex(await c.cmd('d', 'SETQUOTA "" (STORAGE 5)'), /^d NO \[NOPERM\]/m);

  const limited = await mailboxWithQuota(t, app, box.key, box.domain, 'small', 1, imapPort);
  t.regex(await limited.cmd('e', 'GETQUOTA "other"'), /^e NO \[NONEXISTENT\]/m, 'only "" is a root');
  t.regex(await limited.cmd('f', 'SETQUOTA "" (STORAGE 5000)'), /^f NO \[NOPERM\]/m, 'not even to lower it');
  t.regex(await limited.cmd('g', 'GETQUOTA ""'), /^\* QUOTA "" \(STORAGE 0 1024\)/m, 'the quota set through the API stands');
});
