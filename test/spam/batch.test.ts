import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { provision } from '../helpers/smtp.js';
import { spamClassifyStep } from '../../src/spam/filing.js';
import type { Addressed, Delivery, Recipient } from '../../src/inbound/delivery-steps.js';

// The classify step is given a whole storage batch at once (its reads are one statement per batch):
// each message's verdicts must come back in its place, per recipient, whatever else is in the batch.

const NOW = Date.parse('2026-11-28T12:00:00Z');

const delivery = (n: number, from: string, skip = false): Delivery => ({
  id: n, kind: 'api', targets: [], mailFrom: from, size: 200, rawPath: null, ...(skip ? { screening: { skip: true } } : {}),
  message: {
    messageId: `<b${n}@batch.test>`, fromEmail: from, fromName: null, toEmail: 'x@batch.test', cc: [], bcc: [], subject: `message ${n}`,
    receivedAt: NOW, bodyText: `Hello, this is message ${n}.`, bodyHtml: null, headers: { from, subject: `message ${n}` }, attachments: [], auth: null,
  },
});

test('a batch of several tenants\' mail: each recipient gets its own tenant\'s verdict in its place, skipped mail none, the same as one message at a time', async (t) => {
  const app = await startTestApp(t);
  const a = await provision(app, 'batch-a.test', ['ann']);
  const b = await provision(app, 'batch-b.test', ['bob']);
  t.is((await app.post('/v1/spam/lists', a.key, { kind: 'block', pattern: '@spam.example' })).status, 200);
  const tenantOf = async (address: string) => Number((await app.app.db.selectFrom('mailboxes').select('tenant_id').where('address', '=', address).executeTakeFirstOrThrow()).tenant_id);
  const ann: Recipient = { tenantId: await tenantOf('ann@batch-a.test'), mailboxId: a.mailboxes['ann@batch-a.test'], address: 'ann@batch-a.test' };
  const bob: Recipient = { tenantId: await tenantOf('bob@batch-b.test'), mailboxId: b.mailboxes['bob@batch-b.test'], address: 'bob@batch-b.test' };
  t.not(ann.tenantId, bob.tenantId);

  const batch: Addressed[] = [
    { delivery: delivery(1, 'offers@spam.example'), recipients: [ann, bob] },
    { delivery: delivery(2, 'pal@friend.example'), recipients: [ann] },
    { delivery: delivery(3, 'offers@spam.example', true), recipients: [ann] },
    { delivery: delivery(4, 'offers@mail.spam.example'), recipients: [bob, ann] },
  ];
  const step = spamClassifyStep('builtin');
  const together = await step(app.app.db, batch, NOW);
  t.is(together.length, batch.length);
  t.deepEqual(together.map((c) => c.length), [2, 1, 1, 2]);
  const rules = (p: { spam?: unknown }) => ((p.spam as { reasons: Array<{ rule: string }> } | undefined)?.reasons ?? []).map((r) => r.rule);

  t.like(together[0][0], { folder: 'Junk', keywords: ['$Junk'], spam: { verdict: 'junk', filter: 'builtin' } });
  t.deepEqual(rules(together[0][0]), ['BLOCKLIST'], 'tenant A blocks the sender');
  t.like(together[0][1], { folder: 'INBOX', keywords: [], spam: { verdict: 'ham' } });
  t.false(rules(together[0][1]).includes('BLOCKLIST'), 'tenant B has no such entry');
  t.like(together[1][0], { folder: 'INBOX', spam: { verdict: 'ham' } });
  t.deepEqual(together[2][0], { folder: 'INBOX', keywords: [] }, 'a logged-in owner\'s mail is not classified');
  t.like(together[3][0], { folder: 'INBOX', spam: { verdict: 'ham' } });
  t.like(together[3][1], { folder: 'Junk', spam: { verdict: 'junk' } }, 'a sub-domain of a blocked domain, in the second place');

  const alone = [];
  for (const one of batch) alone.push(...await step(app.app.db, [one], NOW));
  t.deepEqual(together, alone);
});
