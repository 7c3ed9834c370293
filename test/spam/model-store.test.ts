import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { TASK_WAIT_MS } from '../helpers/mailboxes.js';
import { spamModelStore, TENANT_MODEL } from '../../src/spam/model-store.js';

test('deleting a mailbox forgets its own spam model; its tenant\'s model and the other mailboxes\' stay', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  const [gone, kept] = box.mailboxes;
  for (const m of [gone!, kept!]) {
    await deliver(app, box.key, m.address, { subject: 'cheap offer', body_text: 'cheap pills offer now, limited stock' });
    await deliver(app, box.key, m.address, { subject: 'meeting', body_text: 'agenda for the project meeting' });
  }
  const emails = [...await waitForEmails(app, box.key, 2, `mailbox_id=${gone!.id}`), ...await waitForEmails(app, box.key, 2, `mailbox_id=${kept!.id}`)];
  for (const e of emails) t.is((await app.post(`/v1/emails/${e.id}/${e.subject === 'meeting' ? 'not-junk' : 'junk'}`, box.key)).status, 200);

  const db = app.app.db;
  const tenantId = Number((await db.selectFrom('mailboxes').select('tenant_id').where('id', '=', gone!.id).executeTakeFirstOrThrow()).tenant_id);
  const tokens = async (model: number) => Number((await db.selectFrom('spam_tokens' as any).select((eb: any) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', tenantId).where('mailbox_id', '=', model).executeTakeFirstOrThrow() as any).n);
  const before = await spamModelStore.totals(db, tenantId, [gone!.id, kept!.id]);
  t.like(before.get(gone!.id), { spam: 1, ham: 1 });
  t.like(before.get(TENANT_MODEL), { spam: 2, ham: 2 });
  t.true(await tokens(gone!.id) > 0);
  const keptTokens = await tokens(kept!.id);
  const tenantTokens = await tokens(TENANT_MODEL);

  const r = await app.post('/v1/delete/mailbox/bulk', box.key, { Mailboxes: [gone!.address] });
  t.is(r.status, 200, JSON.stringify(r.body));
  const task = await app.pollTask('/v1/get/delete/mailbox/bulk', box.key, r.body.task_id, TASK_WAIT_MS);
  t.is(task.body.status, 'completed', JSON.stringify(task.body));

  t.is(await tokens(gone!.id), 0, 'the deleted mailbox\'s counts are gone');
  const after = await spamModelStore.totals(db, tenantId, [gone!.id, kept!.id]);
  t.like(after.get(gone!.id), { spam: 0, ham: 0 });
  t.true(after.get(gone!.id)!.version > before.get(gone!.id)!.version, 'a later mailbox given the same id never matches counts kept for this one');
  t.deepEqual(after.get(kept!.id), before.get(kept!.id));
  t.deepEqual(after.get(TENANT_MODEL), before.get(TENANT_MODEL), 'what it taught its tenant stays');
  t.is(await tokens(kept!.id), keptTokens);
  t.is(await tokens(TENANT_MODEL), tenantTokens);
});
