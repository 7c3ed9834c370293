import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { bulkMailboxes, domain } from '../helpers/mailboxes.js';

test('a 100-mailbox bulk with generated passwords completes within 10 s', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  await domain(app, key, 'hundred.example');
  const started = Date.now();
  const task = await bulkMailboxes(app, key, 'hundred.example', 'Ann Lee Smith', 100, 0);
  const ms = Date.now() - started;
  t.is(task.body.total_email, 100);
  // Generous bound for a shared machine; scripts/bench/mailbox-bulk.ts reports the real figure.
  t.true(ms < 10_000, `${ms} ms`);
});
