import test from 'ava';
import { ftsMatch } from '../../src/emails/fts.js';
import { newestFirst, newestHits, type Hit } from '../../src/emails/search.js';
import { startTestApp } from '../helpers/app.js';
import { deliver, listAll, makeInbox, searchSubjects, waitForEmails } from '../helpers/emails.js';

test('ftsMatch quotes every term: words AND-ed, phrases kept, prefix on the last bare word', (t) => {
  t.is(ftsMatch('hello world'), '"hello" AND "world"*');
  t.is(ftsMatch('"big deal" report'), '"big deal" AND "report"*');
  t.is(ftsMatch('report "big deal"'), '"report" AND "big deal"');
  t.is(ftsMatch('NEAR(a b) OR c'), '"NEAR(a" AND "b)" AND "OR" AND "c"*');
  t.is(ftsMatch('subject:x -y ^z *'), '"subject:x" AND "-y" AND "^z"*');
  t.is(ftsMatch('"unbalanced quote'), '"unbalanced quote"');
  t.is(ftsMatch('***'), null);
  t.is(ftsMatch('  "" () - '), null);
  t.is(ftsMatch('a\u0000b "c\u0000d'), '"a" AND "b" AND "c d"', 'NUL separates words');
});

test('newestHits returns the exact top k whatever the order of ids and dates', async (t) => {
  // Ids in arrival order; dates jump around (an import of old mail, one future-dated message).
  const dates = [50, 10, 60, 61, 5, 99999, 62, 63, 1, 2, 3, 64, 65, 66, 7, 70, 71, 72, 0, 73];
  const all: Hit[] = [];
  let max = -Infinity;
  dates.forEach((d, i) => { max = Math.max(max, d); all.push({ id: i + 1, received_at: d, received_max: max }); });
  let fetches = 0;
  const fetch = async (below: number, limit: number) => {
    fetches++;
    return all.filter((h) => h.id < below).sort((a, b) => b.id - a.id).slice(0, limit);
  };
  for (const k of [1, 3, 5, 20, 30]) {
    const want = [...all].sort(newestFirst).slice(0, k).map((h) => h.id);
    t.deepEqual((await newestHits(k, fetch)).map((h) => h.id), want, `k=${k}`);
  }
  // In-order data stops after the first chunk.
  const ordered: Hit[] = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, received_at: i, received_max: i }));
  fetches = 0;
  const top = await newestHits(26, async (below, limit) => { fetches++; return ordered.filter((h) => h.id < below).reverse().slice(0, limit); });
  t.deepEqual(top.map((h) => h.id), Array.from({ length: 26 }, (_, i) => 1000 - i));
  t.is(fetches, 1);
});

test('q searches subject, body, sender address and name, AND-ed, with phrases and a prefix', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const other = await makeInbox(app);
  await Promise.all([
    deliver(app, box.key, box.address, { subject: 'Quarterly report', body_text: 'numbers are up', from_email: 'cfo@acme.example', from_name: 'Carla Finance' }),
    deliver(app, box.key, box.address, { subject: 'Lunch', body_text: 'the quarterly numbers party', from_email: 'bob@food.example', from_name: 'Bob' }),
    deliver(app, box.key, box.address, { subject: 'Hello', body_text: 'report numbers later', from_email: 'zed@other.example', from_name: 'Zed Zimmer' }),
    deliver(app, box.key, box.address, { subject: 'Ünïcödé', body_text: null, body_html: '<p>caf&eacute; <b>crème</b> brûlée</p>', from_email: 'chef@food.example' }),
    deliver(app, other.key, other.address, { subject: 'Quarterly report', body_text: 'other tenant' }),
  ]);
  await waitForEmails(app, box.key, 4);
  await waitForEmails(app, other.key, 1);
  const subjects = searchSubjects(t, app, box.key);
  t.is(await subjects('quarterly'), 'Lunch,Quarterly report');
  t.is(await subjects('quarterly report'), 'Quarterly report');
  t.is(await subjects('numbers'), 'Hello,Lunch,Quarterly report');
  t.is(await subjects('"numbers are"'), 'Quarterly report');
  t.is(await subjects('"are numbers"'), '');
  t.is(await subjects('quart'), 'Lunch,Quarterly report');
  t.is(await subjects('"quart"'), '');
  t.is(await subjects('cfo@acme.example'), 'Quarterly report');
  t.is(await subjects('food.example'), 'Lunch,Ünïcödé');
  t.is(await subjects('Carla'), 'Quarterly report');
  t.is(await subjects('zimmer'), 'Hello');
  t.is(await subjects('creme brulee'), 'Ünïcödé');
  t.is(await subjects('unicode'), 'Ünïcödé');
  t.is(await subjects('QUARTERLY'), 'Lunch,Quarterly report');
});

test('hostile queries are plain text: never an error, never FTS syntax', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  await deliver(app, box.key, box.address, { subject: 'alpha beta', body_text: 'gamma delta NEAR epsilon' });
  await waitForEmails(app, box.key, 1);
  const hostile = [
    '"', '""', '"""', '*', '**', 'alpha*', '*alpha', '-alpha', 'alpha -beta', 'NOT alpha', 'alpha NOT beta', 'alpha OR zzz',
    'alpha AND', 'AND', 'OR', 'NEAR', 'NEAR(alpha beta)', 'NEAR(alpha beta, 2)', '(alpha', 'alpha)', '((', ')', 'subject:alpha',
    '{subject}: alpha', '^alpha', 'alpha + beta', "alpha'beta", '"alpha beta', 'alpha" beta', '\\', '\u0000', 'a\u0000b', 'alpha\u0000', '\u0000alpha', '"alpha\u0000beta"', '%', '_', ';DROP TABLE emails;--',
    'a'.repeat(500), 'x "y', 'col:*', '#', '@', '.', ':', '"NEAR"', 'near', 'gamma near', 'delta "NEAR" epsilon',
  ];
  for (const q of hostile) {
    const r = await app.get(`/v1/emails?q=${encodeURIComponent(q)}`, box.key);
    t.is(r.status, 200, JSON.stringify(q));
    t.true(Array.isArray(r.body.data), JSON.stringify(q));
  }
  const found = async (q: string) => (await app.get(`/v1/emails?q=${encodeURIComponent(q)}`, box.key)).body.data.length;
  t.is(await found('alpha OR zzz'), 0, 'OR is a word, not an operator');
  t.is(await found('alpha -beta'), 1, '-beta is the word beta');
  t.is(await found('NEAR(alpha beta)'), 0, 'NEAR( is text: the phrase "near alpha" is not in the mail');
  t.is(await found('"delta NEAR epsilon"'), 1, 'a quoted NEAR is the word near');
  t.is(await found('NOT alpha'), 0, 'NOT is a word that is not in the mail');
  t.is((await app.get(`/v1/emails?q=${'a'.repeat(501)}`, box.key)).status, 422);
});

test('search results come newest first, page with cursors and combine with filters, even for out-of-order dates', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  // Arrival order differs from date order: 40 hits with shuffled dates, 40 misses.
  const minutes = Array.from({ length: 40 }, (_, i) => (i * 17) % 40);
  for (const [i, m] of minutes.entries()) {
    await deliver(app, box.key, box.mailboxes[i % 2].address, { subject: `needle ${m}`, received_at: new Date(Date.UTC(2024, 0, 1, 0, m)).toISOString() });
    await deliver(app, box.key, box.mailboxes[i % 2].address, { subject: `hay ${m}`, received_at: new Date(Date.UTC(2024, 0, 1, 0, m)).toISOString() });
  }
  await waitForEmails(app, box.key, 80);
  const hits = await listAll(app, box.key, 'q=needle', 7);
  t.deepEqual(hits.map((e) => e.subject), Array.from({ length: 40 }, (_, i) => `needle ${39 - i}`));
  const mine = await listAll(app, box.key, `q=needle&mailbox_id=${box.mailboxes[0].id}&since=2024-01-01T00:10:00Z`, 3);
  t.true(mine.length > 0);
  t.true(mine.every((e) => e.mailbox_id === box.mailboxes[0].id && e.received_at >= '2024-01-01T00:10:00.000Z' && e.subject.startsWith('needle')));
  t.deepEqual(mine.map((e) => e.received_at), [...mine.map((e) => e.received_at)].sort().reverse());
  // Back from page 3 of the search.
  const p1 = await app.get('/v1/emails?q=needle&per_page=5', box.key);
  const p2 = await app.get(`/v1/emails?q=needle&per_page=5&cursor=${p1.body.meta.next_cursor}`, box.key);
  const p3 = await app.get(`/v1/emails?q=needle&per_page=5&cursor=${p2.body.meta.next_cursor}`, box.key);
  const b2 = await app.get(`/v1/emails?q=needle&per_page=5&cursor=${p3.body.meta.prev_cursor}`, box.key);
  t.deepEqual(b2.body.data.map((e: any) => e.id), p2.body.data.map((e: any) => e.id));
  const b1 = await app.get(`/v1/emails?q=needle&per_page=5&cursor=${b2.body.meta.prev_cursor}`, box.key);
  t.deepEqual(b1.body.data.map((e: any) => e.id), p1.body.data.map((e: any) => e.id));
  t.is(b1.body.meta.prev_cursor, null);
  // A deleted hit is no longer found.
  t.is((await app.del(`/v1/emails/${hits[0].id}`, box.key)).status, 200);
  t.is((await listAll(app, box.key, 'q=needle')).length, 39);
});
