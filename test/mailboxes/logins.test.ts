import test from 'ava';
import { createMailboxLogins, LOGIN_CACHE_MS } from '../../src/mailboxes/logins.js';
import { hashPassword } from '../../src/mailboxes/passwords.js';
import { startTestApp } from '../helpers/app.js';
import { makeInbox } from '../helpers/emails.js';

// Mailbox logins remember a verified password for a short while (Dovecot's auth cache as model):
// a repeated login runs no scrypt, and a changed password, deleted or suspended mailbox applies at once.

const PASSWORD = 'password-123';

test('a repeated login is checked without scrypt; a new password applies at once and the cache lapses', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  let now = 1_000;
  const logins = createMailboxLogins({ db: app.app.db, now: () => now });

  t.truthy(await logins.verify(box.address, PASSWORD));
  t.is(logins.hashed, 1);
  const again = await logins.verify(box.address.toUpperCase(), PASSWORD);
  t.is(again?.mailboxId, box.mailboxId, 'the same mailbox, any case of the address');
  t.is(logins.hashed, 1, 'no scrypt for the repeated login');
  t.is(await logins.verify(box.address, 'wrong-password'), null, 'a wrong password is refused');
  t.is(logins.hashed, 2, 'and hashed as ever');

  // The password changes (as another node or the CLI would write it): the remembered one stops working.
  await app.app.db.updateTable('mailboxes').set({ password_hash: await hashPassword('another-pass-9') }).where('id', '=', box.mailboxId).execute();
  t.is(await logins.verify(box.address, PASSWORD), null, 'the old password is refused at once');
  t.truthy(await logins.verify(box.address, 'another-pass-9'));
  const hashed = logins.hashed;
  t.truthy(await logins.verify(box.address, 'another-pass-9'));
  t.is(logins.hashed, hashed, 'the new one is remembered');

  await app.app.db.updateTable('mailboxes').set({ status: 'suspended' }).where('id', '=', box.mailboxId).execute();
  t.is(await logins.verify(box.address, 'another-pass-9'), null, 'a mailbox that is not active is refused, remembered or not');
  await app.app.db.updateTable('mailboxes').set({ status: 'active' }).where('id', '=', box.mailboxId).execute();

  now += LOGIN_CACHE_MS;
  t.truthy(await logins.verify(box.address, 'another-pass-9'));
  t.is(logins.hashed, hashed + 1, 'hashed again once the cache lapsed');
});
