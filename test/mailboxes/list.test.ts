import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { startTestApp } from '../helpers/app.js';
import { TASK_WAIT_MS, bulkMailboxes, createMailbox, domain } from '../helpers/mailboxes.js';

test('the mailbox list, with and without IMAP credentials', async (t) => {
  const clock = manualClock(Date.UTC(2024, 0, 31, 23, 59, 0));
  const app = await startTestApp(t, { clock });
  const key = await app.keyFor();
  await domain(app, key, 'list.example');
  await createMailbox(app, key, 'list.example', 'b@list.example', 'password1');
  await createMailbox(app, key, 'list.example', 'a@list.example', 0);

  const plain = await app.get('/v1/list/mailbox?domain=list.example', key);
  t.is(plain.status, 200);
  t.deepEqual(plain.body, {
    domain: 'list.example',
    results: {
      'a@list.example': { provisioning_status: 'active', mailbox_quota: '0MB', created_at: '31-01-2024' },
      'b@list.example': { provisioning_status: 'active', mailbox_quota: '0MB', created_at: '31-01-2024' },
    },
    status: 'success',
  });
  const imap = { host: 'mx.mailstead.test', port: 993, encryption: 'ssl' };
  for (const flag of ['1', 'true']) {
    const r = await app.get(`/v1/list/mailbox?domain=List.Example&include_credentials=${flag}`, key);
    t.is(r.status, 200);
    t.deepEqual(r.body.results['a@list.example'], { provisioning_status: 'active', mailbox_quota: '0MB', created_at: '31-01-2024', imap_credentials: imap });
    t.deepEqual(Object.keys(r.body.results), ['a@list.example', 'b@list.example']);
  }
  for (const flag of ['0', 'false']) {
    const r = await app.get(`/v1/list/mailbox?domain=list.example&include_credentials=${flag}`, key);
    t.false('imap_credentials' in r.body.results['a@list.example']);
  }
  const empty = await domain(app, key, 'empty.example');
  t.deepEqual((await app.get(`/v1/list/mailbox?domain=${empty}`, key)).body, { domain: 'empty.example', results: {}, status: 'success' });
});

test('mailbox list errors: 401, 403, 404 for another tenant\'s or unknown domain, 422 for bad input', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const other = await app.keyFor();
  await domain(app, other, 'theirs.example');
  await createMailbox(app, other, 'theirs.example', 'secret@theirs.example');
  t.is((await app.get('/v1/list/mailbox?domain=theirs.example')).status, 401);
  t.is((await app.get('/v1/list/mailbox?domain=theirs.example', await app.keyFor({ perms: ['write'] }))).status, 403);
  const r404 = await app.get('/v1/list/mailbox?domain=theirs.example', key);
  t.is(r404.status, 404);
  t.deepEqual(r404.body, { status: 'error', reason: 'Domain not found' });
  t.is((await app.get('/v1/list/mailbox?domain=nowhere.example', key)).status, 404);
  t.deepEqual((await app.get('/v1/list/mailbox', key)).body, { status: 'error', reason: 'domain is required' });
  t.is((await app.get('/v1/list/mailbox?domain=theirs.example&include_credentials=yes', other)).status, 422);
});

test('mailbox_count of the domain list is the real count', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'count.example');
  await domain(app, key, 'zero.example');
  await bulkMailboxes(app, key, 'count.example', 'Ann Smith', 5);
  const list = await app.get('/v1/list/domain', key);
  t.is(list.body.results['count.example'].mailbox_count, '5');
  t.is(list.body.results['zero.example'].mailbox_count, '0');
});
