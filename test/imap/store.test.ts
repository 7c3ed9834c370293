import test from 'ava';
import { sql } from 'kysely';
import { deliver, waitForEmails } from '../helpers/emails.js';
import { imapApp, PASSWORD, rawImap } from '../helpers/imap.js';
import { onPostgres } from '../helpers/pg.js';
import { PRIVATE_HOOKS, subscribeAll } from '../helpers/webhooks.js';
import type { TestClient } from '../helpers/app.js';

/*
 * STORE (RFC 9051 6.4.6): \Seen of a set is one transaction with one email.read per message, and a
 * write the database refuses answers NO and changes nothing, in the session or in the API.
 */

/** Makes the database refuse to set read_at of one email (a trigger), until the returned function drops it. */
async function refuseReadOf(app: TestClient, emailId: number): Promise<() => Promise<void>> {
  const db = app.app.db;
  if (onPostgres) {
    await sql.raw(`CREATE FUNCTION refuse_read() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF NEW.id = ${emailId} AND NEW.read_at IS NOT NULL THEN RAISE EXCEPTION 'read refused'; END IF; RETURN NEW; END $$`).execute(db);
    await sql.raw('CREATE TRIGGER refuse_read BEFORE UPDATE ON emails FOR EACH ROW EXECUTE FUNCTION refuse_read()').execute(db);
    return async () => { await sql.raw('DROP TRIGGER refuse_read ON emails').execute(db); };
  }
  await sql.raw(`CREATE TRIGGER refuse_read BEFORE UPDATE OF read_at ON emails
    WHEN NEW.id = ${emailId} AND NEW.read_at IS NOT NULL BEGIN SELECT RAISE(ABORT, 'read refused'); END`).execute(db);
  return async () => { await sql.raw('DROP TRIGGER refuse_read').execute(db); };
}

/** The email.read deliveries queued for the tenant's webhooks: recorded in the transaction of the change. */
const readEvents = (app: TestClient) =>
  app.app.db.selectFrom('webhook_deliveries').select('email_id').where('event_type', '=', 'email.read').execute().then((r) => r.map((x) => x.email_id).sort((a, b) => a - b));

test('STORE +FLAGS \\Seen of a set is one transaction: one refused write answers NO and leaves every message as it was', async (t) => {
  const { app, box, imapPort } = await imapApp(t, { env: PRIVATE_HOOKS });
  await subscribeAll(t, app, box.key);
  for (let i = 0; i < 3; i++) await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 3);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  const allow = await refuseReadOf(app, items[1].id);
  const refused = await c.cmd('c', 'STORE 1:3 +FLAGS (\\Seen \\Flagged)');
  t.regex(refused, /^c NO/m);
  t.notRegex(refused, /\\Seen/, 'no FETCH shows \\Seen');
  const flags = await c.cmd('d', 'FETCH 1:3 FLAGS');
  t.is((flags.match(/\* \d FETCH \(FLAGS \((?:\\Recent)?\)\)/g) ?? []).length, 3, 'the session shows no flag set');
  for (const item of items) {
    const got = await app.get(`/v1/emails/${item.id}`, box.key);
    t.false(got.body.data.is_read);
    t.deepEqual(got.body.data.flags, [], 'the flag written in the same transaction was rolled back');
  }
  t.deepEqual(await readEvents(app), [], 'no email.read recorded');

  await allow();
  t.regex(await c.cmd('e', 'STORE 1:3 +FLAGS (\\Seen)'), /^e OK/m);
  t.deepEqual(await readEvents(app), items.map((x) => x.id).sort((a, b) => a - b), 'one email.read per message');
  for (const item of items) t.true((await app.get(`/v1/emails/${item.id}`, box.key)).body.data.is_read);
  t.regex(await c.cmd('f', 'STORE 1:3 +FLAGS (\\Seen)'), /^f OK/m);
  t.is((await readEvents(app)).length, 3, 'setting \\Seen again records nothing');
});

test('FETCH BODY[] of a set whose \\Seen write is refused answers NO before any message and shows none as seen', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 2; i++) await deliver(app, box.key, box.address);
  const items = await waitForEmails(app, box.key, 2);
  const c = await rawImap(t, imapPort);
  await c.cmd('a', `LOGIN ${box.address} ${PASSWORD}`);
  await c.cmd('b', 'SELECT INBOX');
  const allow = await refuseReadOf(app, items[0].id);
  const refused = await c.cmd('c', 'FETCH 1:2 BODY[]');
  t.regex(refused, /^c NO/m);
  t.notRegex(refused, /FETCH \(/, 'no message was answered');
  t.notRegex(await c.cmd('d', 'FETCH 1:2 FLAGS'), /\\Seen/);
  for (const item of items) t.false((await app.get(`/v1/emails/${item.id}`, box.key)).body.data.is_read);
  await allow();
  const fetched = await c.cmd('e', 'FETCH 1:2 BODY[]');
  t.regex(fetched, /^e OK/m);
  t.is((fetched.match(/FLAGS \((?:\\Recent )?\\Seen\)/g) ?? []).length, 2, 'both answered with \\Seen set');
  for (const item of items) t.true((await app.get(`/v1/emails/${item.id}`, box.key)).body.data.is_read);
});
