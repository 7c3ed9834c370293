import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, makeInbox, waitForEmails } from '../helpers/emails.js';
import { spamModelStore, TENANT_MODEL } from '../../src/spam/model-store.js';
import { tokenCache } from '../../src/spam/token-cache.js';
import { TokenTable } from '../../src/spam/token-table.js';
import { classifyBuiltin } from '../../src/spam/classify.js';
import { featureIds, hash53 } from '../../src/spam/tokens.js';

// The storage thread keeps the token counts it has read between batches (spam/token-cache.ts): kept
// while the model's version is unchanged, read afresh once any training changed the model, even a
// retraining that leaves its totals as they were.

const SPAM_BODY = 'cheap pills offer now, limited stock';
const HAM_BODY = 'agenda for the project meeting and the notes';

test('kept token counts are used while the model is unchanged, give the verdicts fresh ones give, and are read again after a training that leaves the totals as they were', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  for (let i = 0; i < 10; i++) {
    await deliver(app, box.key, box.address, { subject: `offer ${i}`, body_text: `${SPAM_BODY} ${i}` });
    await deliver(app, box.key, box.address, { subject: `meeting ${i}`, body_text: `${HAM_BODY} ${i}` });
  }
  const emails = await waitForEmails(app, box.key, 20);
  const spam = emails.filter((e) => e.subject.startsWith('offer')).map((e) => e.id);
  const ham = emails.filter((e) => e.subject.startsWith('meeting')).map((e) => e.id);
  for (const id of spam) t.is((await app.post(`/v1/emails/${id}/junk`, box.key)).status, 200);
  for (const id of ham) t.is((await app.post(`/v1/emails/${id}/not-junk`, box.key)).status, 200);

  const db = app.app.db;
  const tenantId = Number((await db.selectFrom('mailboxes').select('tenant_id').where('id', '=', box.mailboxId).executeTakeFirstOrThrow()).tenant_id);
  // The mailbox is trained enough: its own model decides.
  const totals = async () => (await spamModelStore.totals(db, tenantId, [box.mailboxId])).get(box.mailboxId)!;
  const tokens = featureIds({ subject: 'offer', fromEmail: 'ann@sender.example', headers: {}, bodyText: `${SPAM_BODY} ${HAM_BODY}`, bodyHtml: null });
  const candidate = { tenantId, mailboxId: box.mailboxId, auth: null, subject: 'offer', fromEmail: 'ann@sender.example', headers: {}, bodyText: `${SPAM_BODY} ${HAM_BODY}`, bodyHtml: null };
  const bayes = (v: { reasons: Array<{ rule: string; detail?: string }> }) => v.reasons.find((r) => r.rule.startsWith('BAYES_'))?.detail;
  const cache = tokenCache();
  const CHEAP = hash53('cheap');

  const before = await totals();
  t.like(before, { spam: 10, ham: 10 });
  const [first] = await classifyBuiltin(db, [candidate], undefined, cache);
  t.is(cache.size(), tokens.length, 'every feature read once: known ones with their counts, the rest as absent');
  const kept = cache.counts(`${tenantId}:${box.mailboxId}`, before.version);
  const cheap = kept.find(CHEAP);
  t.true(cheap >= 0 && kept.known(cheap), `slot ${cheap} of ${kept.size} (${tokens.includes(CHEAP)})`);
  t.deepEqual([kept.spam(cheap), kept.ham(cheap)], [10, 0]);
  const [again] = await classifyBuiltin(db, [candidate], undefined, cache);
  t.is(cache.size(), tokens.length, 'nothing read again while the model is unchanged');
  t.deepEqual(again, first);
  t.deepEqual((await classifyBuiltin(db, [candidate]))[0], first, 'the same verdict as without kept counts');

  // One spam message rescued and one ham message junked: 10 and 10 again, but not the same model.
  t.is((await app.post(`/v1/emails/${spam[0]}/not-junk`, box.key)).status, 200);
  t.is((await app.post(`/v1/emails/${ham[0]}/junk`, box.key)).status, 200);
  const after = await totals();
  t.like(after, { spam: 10, ham: 10 });
  t.not(after.version, before.version);
  const [fresh] = await classifyBuiltin(db, [candidate], undefined, cache);
  t.deepEqual(fresh, (await classifyBuiltin(db, [candidate]))[0], 'read afresh after the training');
  const now = cache.counts(`${tenantId}:${box.mailboxId}`, after.version);
  t.not(now, kept);
  t.deepEqual([now.spam(now.find(CHEAP)), now.ham(now.find(CHEAP))], [9, 1]);
  t.truthy(bayes(fresh));

  // Bounded: a second model pushes the least recently used one out.
  const small = tokenCache(tokens.length + 1);
  const fill = (key: string) => { const table = small.counts(key, 1); for (const tok of tokens) table.set(tok, null); small.grew(key, tokens.length); };
  fill('a');
  fill('b');
  t.is(small.size(), tokens.length);
  t.is(small.counts('a', 1).size, 0, 'the dropped model starts empty');
});

test('the token table: counts, absent tokens and tokens not read yet, kept through its growth', (t) => {
  const table = new TokenTable(4);
  const ids = Array.from({ length: 5000 }, (_, i) => hash53(`token ${i}`));
  ids.forEach((id, i) => table.set(id, i % 3 === 0 ? null : { spam: i, ham: 2 * i }));
  t.is(table.size, 5000);
  ids.forEach((id, i) => {
    const slot = table.find(id);
    t.true(slot >= 0, `token ${i} found`);
    if (i % 3 === 0) t.false(table.known(slot), `token ${i} absent from the model`);
    else t.deepEqual([table.spam(slot), table.ham(slot)], [i, 2 * i]);
  });
  t.is(table.find(hash53('never read')), -1);
  table.set(ids[1], { spam: 7, ham: 0 });
  t.is(table.size, 5000, 'set again: replaced, not added');
  t.is(table.spam(table.find(ids[1])), 7);
});
