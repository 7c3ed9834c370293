import test from 'ava';
import { sendMail } from '../helpers/smtp.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, message, startWorld, waitForItems } from './world.js';

test('finished items older than 30 days are pruned with the message bytes only they held; newer ones stay', async (t) => {
  const { app, key, sink } = await startWorld(t, { answer: (rcpt) => (rcpt.startsWith('dest') ? '550 5.1.1 gone' : null) });
  await sendMail(app.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, 'old news'));
  await sink.nth(1);
  const items = await waitForItems(app, key, (all) => all.length === 2 && all.every((i) => i.status !== 'queued'), 'forward failed, DSN sent');
  const db = app.app.db;
  t.is((await db.selectFrom('outbound_messages').select('id').execute()).length, 1);
  t.is((await db.selectFrom('inbound').select('id').execute()).length, 1);

  await app.app.outbound.prune();
  t.is((await waitForItems(app, key, () => true, 'items')).length, 2, 'recent items stay');

  const forward = items.find((i) => i.kind === 'forward');
  await db.updateTable('outbound').set({ updated_at: Date.now() - 31 * 24 * 3600 * 1000 }).where('id', '=', forward.id).execute();
  await app.app.outbound.prune();
  t.deepEqual((await waitForItems(app, key, () => true, 'items')).map((i) => i.kind), ['dsn']);
  t.is((await db.selectFrom('inbound').select('id').execute()).length, 0, 'the forwarded message is no longer kept');
  await db.updateTable('outbound').set({ updated_at: 0 }).execute();
  await app.app.outbound.prune();
  t.is((await db.selectFrom('outbound').select('id').execute()).length, 0);
  t.is((await db.selectFrom('outbound_messages').select('id').execute()).length, 0);
});
