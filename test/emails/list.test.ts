import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, listAll, makeInbox, waitForEmails } from '../helpers/emails.js';

const at = (minute: number) => new Date(Date.UTC(2024, 4, 1, 10, minute)).toISOString();

test('filters alone and combined: mailbox_id, unread, since, before', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  const [a, b] = box.mailboxes;
  // Mailbox a gets minutes 0..5, mailbox b minutes 10..13.
  await Promise.all([0, 1, 2, 3, 4, 5].map((m) => deliver(app, box.key, a.address, { received_at: at(m), subject: `a${m}` })));
  await Promise.all([10, 11, 12, 13].map((m) => deliver(app, box.key, b.address, { received_at: at(m), subject: `b${m}` })));
  const all = await waitForEmails(app, box.key, 10);
  t.deepEqual(all.map((e) => e.subject), ['b13', 'b12', 'b11', 'b10', 'a5', 'a4', 'a3', 'a2', 'a1', 'a0']);
  for (const s of ['a1', 'a3', 'b12']) {
    const id = all.find((e) => e.subject === s).id;
    t.is((await app.post(`/v1/emails/${id}/read`, box.key)).status, 200);
  }
  const subjects = async (q: string) => {
    const r = await app.get(`/v1/emails?per_page=100&${q}`, box.key);
    t.is(r.status, 200, q);
    return r.body.data.map((e: any) => e.subject).join(',');
  };
  t.is(await subjects(`mailbox_id=${a.id}`), 'a5,a4,a3,a2,a1,a0');
  t.is(await subjects(`mailbox_id=${b.id}`), 'b13,b12,b11,b10');
  t.is(await subjects('unread=true'), 'b13,b11,b10,a5,a4,a2,a0');
  t.is(await subjects('unread=1'), 'b13,b11,b10,a5,a4,a2,a0');
  t.is(await subjects('unread=false'), 'b12,a3,a1');
  t.is(await subjects('unread=0'), 'b12,a3,a1');
  t.is(await subjects(`since=${at(4)}`), 'b13,b12,b11,b10,a5,a4');
  t.is(await subjects(`before=${at(4)}`), 'a4,a3,a2,a1,a0');
  t.is(await subjects(`since=${at(2)}&before=${at(11)}`), 'b11,b10,a5,a4,a3,a2');
  t.is(await subjects(`mailbox_id=${a.id}&unread=true&since=${at(1)}&before=${at(4)}`), 'a4,a2');
  t.is(await subjects(`mailbox_id=${b.id}&unread=false`), 'b12');
  t.is(await subjects(`since=${encodeURIComponent('2024-05-01T12:12:00+02:00')}`), 'b13,b12');
  t.is(await subjects(`since=${at(30)}`), '');
  t.is(await subjects(`mailbox_id=999999`), '');
});

test('invalid list parameters are 422 naming the parameter', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const cases: Array<[string, RegExp]> = [
    ['since=yesterday', /^since /],
    ['before=2024-13-01T00:00:00Z', /^before /],
    ['unread=maybe', /^unread must be one of/],
    ['per_page=0', /^per_page must be at least 1$/],
    ['per_page=101', /^per_page must be at most 100$/],
    ['per_page=ten', /^per_page must be integer$/],
    ['per_page=2.5', /^per_page must be integer$/],
    ['cursor=!!!', /^cursor is invalid$/],
    ['cursor=bm90IGEgY3Vyc29y', /^cursor is invalid$/],
    ['mailbox_id=abc', /^mailbox_id must be integer$/],
    // ajv alone would read these as numbers: an id or a count has one spelling.
    ['mailbox_id=0x1', /^mailbox_id must be integer$/],
    ['per_page=1e1', /^per_page must be integer$/],
    ['per_page=%201', /^per_page must be integer$/],
    ['per_page=%2B1', /^per_page must be integer$/],
    ['per_page=2.0', /^per_page must be integer$/],
    ['q=a&q=b', /^q must be string$/],
  ];
  for (const [q, reason] of cases) {
    const r = await app.get(`/v1/emails?${q}`, box.key);
    t.is(r.status, 422, q);
    t.regex(r.body.reason, reason, q);
  }
});

test('keyset pages never repeat or skip a row while new mail arrives, and prev_cursor leads back', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  // 23 messages, several sharing a received_at, so ties are broken by id.
  await Promise.all(Array.from({ length: 23 }, (_, i) => deliver(app, box.key, box.address, { received_at: at(Math.floor(i / 3)), subject: `s${i}` })));
  const before = await waitForEmails(app, box.key, 23);
  const seen: any[] = [];
  const pages: any[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const r = await app.get(`/v1/emails?per_page=5${cursor ? `&cursor=${cursor}` : ''}`, box.key);
    t.is(r.status, 200);
    pages.push(r.body);
    seen.push(...r.body.data);
    if (page === 0) t.is(r.body.meta.prev_cursor, null);
    else t.truthy(r.body.meta.prev_cursor);
    // New mail arrives between pages: newer than everything, and older than everything.
    await deliver(app, box.key, box.address, { received_at: at(100 + page), subject: `new${page}` });
    await deliver(app, box.key, box.address, { received_at: at(-100 - page), subject: `old${page}` });
    // Storage is asynchronous: the next page is read once both are in.
    await waitForEmails(app, box.key, Math.min(100, 23 + 2 * (page + 1)));
    cursor = r.body.meta.next_cursor;
    if (!cursor) break;
  }
  const ids = seen.map((e) => e.id);
  t.is(new Set(ids).size, ids.length, 'no row twice');
  t.deepEqual(seen.filter((e) => e.subject.startsWith('s')).map((e) => e.id), before.map((e) => e.id), 'every original row, in order');
  t.false(seen.some((e) => e.subject.startsWith('new')), 'mail newer than the first page is not in later pages');
  const olds = seen.filter((e) => e.subject.startsWith('old')).map((e) => e.subject);
  t.true(olds.length >= pages.length - 1, 'mail older than the cursor shows up further down');
  const n = pages.length;
  t.is(pages[n - 1].meta.next_cursor, null);
  // Walking back from the last page gives the page before it.
  const back = await app.get(`/v1/emails?per_page=5&cursor=${pages[n - 1].meta.prev_cursor}`, box.key);
  t.deepEqual(back.body.data.map((e: any) => e.id), pages[n - 2].data.map((e: any) => e.id));
  t.truthy(back.body.meta.next_cursor);
  const forward = await app.get(`/v1/emails?per_page=5&cursor=${back.body.meta.next_cursor}`, box.key);
  // (plus the older mail that arrived after the last page was read)
  t.deepEqual(forward.body.data.slice(0, pages[n - 1].data.length).map((e: any) => e.id), pages[n - 1].data.map((e: any) => e.id));
  // Back to the top: the newest mail that arrived meanwhile shows up there, and the first page has no prev.
  let prev: string | null = pages[1].meta.prev_cursor;
  const top: any[] = [];
  for (let i = 0; prev && i < 20; i++) {
    const r = await app.get(`/v1/emails?per_page=5&cursor=${prev}`, box.key);
    top.unshift(...r.body.data);
    prev = r.body.meta.prev_cursor;
  }
  t.is(top[0].subject.startsWith('new'), true);
  t.deepEqual(top.slice(-5).map((e) => e.id), pages[0].data.map((e: any) => e.id));
  const everything = await listAll(app, box.key, '', 7);
  t.is(everything.length, 23 + 2 * pages.length);
  t.is(new Set(everything.map((e) => e.id)).size, everything.length);
});
