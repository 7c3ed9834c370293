import test from 'ava';
import { deliver, waitForEmails, waitForMessage } from '../helpers/emails.js';
import { appendRaw, imapApp, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';
import { folderSnapshots } from '../../src/emails/folders/snapshots.js';

// A folder's message list is kept between SELECTs and caught up from the mailbox's changes
// (src/emails/folders/snapshots.ts, issue 47). Whatever changed in between, from any face, a later
// SELECT must show exactly what the database holds: the same UIDs, in order, with the same flags.

type App = Awaited<ReturnType<typeof imapApp>>['app'];

async function login(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  return c;
}

/** What the database holds for a folder: UID and flags (as IMAP shows them, sorted) of each live message, in UID order. */
async function stored(app: App, mailboxId: number, folder: string): Promise<string[]> {
  const rows = await app.app.db.selectFrom('emails').select(['uid', 'flags', 'read_at'])
    .where('mailbox_id', '=', mailboxId).where('folder', '=', folder).where('deleted_at', 'is', null).orderBy('uid').execute();
  return rows.map((r) => `${r.uid}:${[...(r.read_at !== null ? ['\\Seen'] : []), ...(r.flags ? r.flags.split(' ') : [])].sort().join(' ')}`);
}

/** What a fresh SELECT shows: EXISTS, then UID and flags of every message in sequence order. */
async function selected(c: RawImap, folder: string): Promise<{ exists: number; messages: string[] }> {
  const sel = await c.cmd('s', `SELECT ${folder}`);
  t0(sel);
  const exists = Number(/^\* (\d+) EXISTS/m.exec(sel)?.[1] ?? -1);
  const fetched = await c.cmd('f', 'FETCH 1:* (UID FLAGS)');
  const messages: Array<[number, string]> = [];
  for (const line of fetched.split('\r\n')) {
    const m = /^\* (\d+) FETCH \((.*)\)$/.exec(line);
    if (!m) continue;
    const uid = /UID (\d+)/.exec(m[2])![1];
    const flags = /FLAGS \(([^)]*)\)/.exec(m[2])![1].split(' ').filter((f) => f && f !== '\\Recent').sort().join(' ');
    messages.push([Number(m[1]), `${uid}:${flags}`]);
  }
  return { exists, messages: messages.sort((a, b) => a[0] - b[0]).map((m) => m[1]) };
}
const t0 = (sel: string) => { if (!/^s OK/m.test(sel)) throw new Error(`SELECT failed: ${sel}`); };

test('a SELECT after changes from REST, other IMAP sessions and delivery shows exactly what is stored', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 8; i++) await deliver(app, box.key, box.address, { subject: `m${i}` });
  const items = await waitForEmails(app, box.key, 8);
  const a = await login(t, imapPort, box.address);
  const first = await selected(a, 'INBOX');
  t.is(first.exists, 8);
  t.deepEqual(first.messages, await stored(app, box.mailboxId, 'INBOX'), 'the first SELECT reads the folder');

  // Changes from every face while the list is kept.
  const byOldest = [...items].reverse();
  t.is((await app.post(`/v1/emails/${byOldest[0].id}/read`, box.key)).status, 200);
  t.is((await app.del(`/v1/emails/${byOldest[1].id}`, box.key)).status, 200);
  const b = await login(t, imapPort, box.address);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^s OK/m);
  t.regex(await b.cmd('st', 'UID STORE 3 +FLAGS (\\Flagged $Work)'), /^st OK/m);
  t.regex(await b.cmd('mv', 'UID MOVE 4 Trash'), /^mv OK/m);
  t.regex(await b.cmd('mv2', 'UID MOVE 5 Trash'), /^mv2 OK/m);
  t.regex(await b.cmd('s2', 'SELECT Trash'), /^s2 OK/m);
  t.regex(await b.cmd('back', 'UID MOVE 2 INBOX'), /^back OK/m, 'one moved message comes back under a new UID');
  t.regex(await appendRaw(b, 'ap', 'INBOX', 'From: a@x.example\r\nSubject: appended\r\n\r\nbody\r\n', { flags: '\\Seen $Label1' }), /^ap OK/);
  await waitForMessage(app, box.key, await deliver(app, box.key, box.address, { subject: 'late' }));

  const expected = await stored(app, box.mailboxId, 'INBOX');
  const again = await selected(a, 'INBOX');
  t.is(again.exists, expected.length);
  t.deepEqual(again.messages, expected, 'the same session re-selecting sees the stored state');
  const c = await login(t, imapPort, box.address);
  t.deepEqual((await selected(c, 'INBOX')).messages, expected, 'a new session sees it too');
  t.deepEqual((await selected(c, 'Trash')).messages, await stored(app, box.mailboxId, 'Trash'), 'and the folder mail moved to');
  t.true(expected.some((m) => m.includes('$Work')) && expected.some((m) => m.includes('$Label1')));
});

test('many changes since the list was kept (more than one page of them) are all folded in', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  for (let i = 0; i < 5; i++) await deliver(app, box.key, box.address, { subject: `m${i}` });
  await waitForEmails(app, box.key, 5);
  const a = await login(t, imapPort, box.address);
  t.is((await selected(a, 'INBOX')).exists, 5);
  // 1,200 flag changes: more than one page (1,000) of the mailbox's changes.
  for (let i = 0; i < 240; i++) t.regex(await a.cmd(`x${i}`, `STORE 1:5 ${i % 2 ? '-' : '+'}FLAGS.SILENT ($K${i % 7})`), new RegExp(`^x${i} OK`, 'm'));
  const b = await login(t, imapPort, box.address);
  t.deepEqual((await selected(b, 'INBOX')).messages, await stored(app, box.mailboxId, 'INBOX'));
});

test('a folder larger than the budget is still kept (alone) and caught up; the next folder selected takes its place', async (t) => {
  const { app, box } = await imapApp(t, { count: 2 });
  const [big, small] = box.mailboxes;
  for (let i = 0; i < 12; i++) await deliver(app, box.key, big.address, { subject: `big ${i}` });
  for (let i = 0; i < 3; i++) await deliver(app, box.key, small.address, { subject: `small ${i}` });
  await waitForEmails(app, box.key, 15, '&folder=INBOX');
  const tenantId = Number((await app.app.db.selectFrom('mailboxes').select('tenant_id').where('id', '=', big.id).executeTakeFirstOrThrow()).tenant_id);
  const snapshots = folderSnapshots(app.app.db, 5);
  const uids = async (mailboxId: number) => (await snapshots.entries(tenantId, mailboxId, 'INBOX')).map((e) => e.uid);

  t.is((await uids(big.id)).length, 12);
  t.is(snapshots.keptEntries(), 12, 'kept although over the budget of 5');
  await deliver(app, box.key, big.address, { subject: 'big 12' });
  await waitForEmails(app, box.key, 16, '&folder=INBOX');
  t.deepEqual(await uids(big.id), (await stored(app, big.id, 'INBOX')).map((s) => Number(s.split(':')[0])), 'caught up with the new message');
  t.is(snapshots.keptEntries(), 13);
  t.is((await uids(small.id)).length, 3);
  t.is(snapshots.keptEntries(), 3, 'the larger folder gave way to the one selected after it');
});
