import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, createAlias, createMailbox, domain } from '../helpers/mailboxes.js';

const inbound = (to: string, id: string) => ({
  message_id: `<${id}@cache.example>`, from_email: 'sender@outside.example', to_email: to, subject: 'cache', received_at: '2026-01-01T00:00:00Z', body_text: 'x',
});

// The recipient resolver remembers answers between writes; every change to the directory must be seen at once.
test('inbound sees a mailbox, an alias and a deletion at once, however often the address was resolved before', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'cache.example');
  for (let i = 0; i < 3; i++) t.is((await app.post('/v1/mail/inbound', key, inbound('new@cache.example', `a${i}`))).status, 422);

  t.is((await createMailbox(app, key, 'cache.example', 'new@cache.example')).body.status, 'completed');
  t.is((await app.post('/v1/mail/inbound', key, inbound('new@cache.example', 'b0'))).status, 200);

  t.is((await app.post('/v1/mail/inbound', key, inbound('team@cache.example', 'c0'))).status, 422);
  t.is((await createAlias(app, key, 'cache.example', { address: 'team@cache.example', goto: 'new@cache.example' })).body.status, 'completed');
  t.is((await app.post('/v1/mail/inbound', key, inbound('team@cache.example', 'c1'))).status, 200);

  const del = await app.post('/v1/delete/mailbox/bulk', key, { Mailboxes: ['new@cache.example'] });
  t.is(del.status, 200);
  const done = await app.pollTask('/v1/get/delete/mailbox/bulk', key, del.body.task_id, TASK_WAIT_MS);
  t.is(done.body.status, 'completed');
  t.is((await app.post('/v1/mail/inbound', key, inbound('new@cache.example', 'b1'))).status, 422);
});
