import test from 'ava';
import { listAll } from '../helpers/emails.js';
import { appendRaw, imapApp, imapClient, PASSWORD, rawImap, type RawImap } from '../helpers/imap.js';

/*
 * EXPUNGE (RFC 9051 6.4.3), UID EXPUNGE (UIDPLUS, RFC 4315 2.1) and CLOSE (RFC 9051 6.4.1): only
 * messages marked \Deleted go, each one the API's soft delete; the session is told of each by
 * EXPUNGE, highest number first so every number names the message it had (or by one VANISHED with
 * QRESYNC); other sessions on the folder hear of it at their next command; CLOSE tells nothing.
 */

async function login(t: Parameters<typeof rawImap>[0], port: number, address: string): Promise<RawImap> {
  const c = await rawImap(t, port);
  t.regex(await c.cmd('l', `LOGIN ${address} ${PASSWORD}`), /^l OK/m);
  return c;
}

/** Appends messages with subjects m1..m`count` to INBOX (UIDs 1..count). */
async function fill(t: Parameters<typeof rawImap>[0], c: RawImap, count: number, flags?: string): Promise<void> {
  for (let i = 1; i <= count; i++) {
    t.regex(await appendRaw(c, `p${i}`, 'INBOX', `From: a@x.example\r\nSubject: m${i}\r\n\r\nbody ${i}\r\n`, { flags }), /^p\d+ OK/);
  }
}

const untagged = (reply: string) => reply.split('\r\n').filter((l) => l.startsWith('* '));

test('EXPUNGE removes only the \\Deleted messages, told highest number first; the API no longer lists them', async (t) => {
  const { app, box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  await fill(t, c, 5);
  t.regex(await c.cmd('a', 'EXPUNGE'), /^a BAD EXPUNGE is not allowed now/m, 'no folder selected');
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 5 EXISTS/m);
  t.regex(await c.cmd('d', 'STORE 2,3,5 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  t.regex(await c.cmd('b', 'EXPUNGE 1'), /^b BAD/m, 'EXPUNGE takes no argument');
  const x = await c.cmd('x', 'EXPUNGE');
  t.deepEqual(untagged(x), ['* 5 EXPUNGE', '* 3 EXPUNGE', '* 2 EXPUNGE']);
  t.regex(x, /^x OK EXPUNGE completed/m);
  t.regex(await c.cmd('u', 'UID SEARCH ALL'), /^\* SEARCH 1 4\r\n/m, 'the two not marked are left');
  t.regex(await c.cmd('f', 'FETCH 2 (UID)'), /^\* 2 FETCH \(UID 4\)/m, 'numbers closed up');
  const again = await c.cmd('y', 'EXPUNGE');
  t.deepEqual(untagged(again), [], 'nothing marked: nothing removed');
  t.deepEqual((await listAll(app, box.key)).map((e) => e.subject).sort(), ['m1', 'm4']);
});

test('UID EXPUNGE removes only the \\Deleted messages of its UID set; without a set it is BAD', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  await fill(t, c, 4);
  t.regex(await c.cmd('s', 'SELECT INBOX'), /^\* 4 EXISTS/m);
  t.regex(await c.cmd('d', 'STORE 1:3 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  t.regex(await c.cmd('b', 'UID EXPUNGE'), /^b BAD/m);
  const u = await c.cmd('u', 'UID EXPUNGE 2:4');
  t.deepEqual(untagged(u), ['* 3 EXPUNGE', '* 2 EXPUNGE'], 'UID 4 is in the set but not \\Deleted');
  t.regex(u, /^u OK UID EXPUNGE completed/m);
  t.regex(await c.cmd('k', 'UID SEARCH DELETED'), /^\* SEARCH 1\r\n/m, 'UID 1, outside the set, is still there and still \\Deleted');
  t.deepEqual(untagged(await c.cmd('n', 'UID EXPUNGE 90:99')), [], 'UIDs that do not exist: nothing');
  t.deepEqual(untagged(await c.cmd('x', 'EXPUNGE')), ['* 1 EXPUNGE']);
  t.regex(await c.cmd('a', 'UID SEARCH ALL'), /^\* SEARCH 4\r\n/m);
});

test('EXPUNGE in a folder opened with EXAMINE is refused [READ-ONLY]; CLOSE there leaves the \\Deleted messages', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const c = await login(t, imapPort, box.address);
  await fill(t, c, 2, '\\Deleted');
  t.regex(await c.cmd('e', 'EXAMINE INBOX'), /^e OK \[READ-ONLY\]/m);
  t.regex(await c.cmd('x', 'EXPUNGE'), /^x NO \[READ-ONLY\]/m);
  t.regex(await c.cmd('u', 'UID EXPUNGE 1:*'), /^u NO \[READ-ONLY\]/m);
  const closed = await c.cmd('c', 'CLOSE');
  t.deepEqual(untagged(closed), []);
  t.regex(closed, /^c OK CLOSE completed/m);
  const sel = await c.cmd('s', 'SELECT INBOX');
  t.regex(sel, /^\* 2 EXISTS/m, 'both still there');
  t.regex(await c.cmd('k', 'SEARCH DELETED'), /^\* SEARCH 1 2\r\n/m);
});

test('another session on the folder is told of the expunge at its next command: by number, or with VANISHED once it enabled QRESYNC', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await login(t, imapPort, box.address);
  await fill(t, a, 4);
  t.regex(await a.cmd('s', 'SELECT INBOX'), /^s OK/m);
  const b = await login(t, imapPort, box.address);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^\* 4 EXISTS/m);
  const q = await login(t, imapPort, box.address);
  t.regex(await q.cmd('e', 'ENABLE QRESYNC'), /^\* ENABLED QRESYNC/m);
  t.regex(await q.cmd('s', 'SELECT INBOX'), /^\* 4 EXISTS/m);

  t.regex(await a.cmd('d', 'STORE 1,3 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  t.deepEqual(untagged(await a.cmd('x', 'EXPUNGE')), ['* 3 EXPUNGE', '* 1 EXPUNGE']);
  const heard = untagged(await b.cmd('n', 'NOOP'));
  t.deepEqual(heard.filter((l) => / EXPUNGE$/.test(l)), ['* 3 EXPUNGE', '* 1 EXPUNGE'], 'highest first, by the numbers b knew');
  t.regex(await b.cmd('f', 'FETCH 1:* (UID)'), /^\* 1 FETCH \(UID 2\)\r\n\* 2 FETCH \(UID 4\)\r\nf OK/m);
  const vanished = untagged(await q.cmd('n', 'NOOP'));
  t.deepEqual(vanished.filter((l) => /EXPUNGE|VANISHED/.test(l)), ['* VANISHED 1,3']);
});

test('CLOSE expunges the \\Deleted messages without telling the client that closed; UNSELECT leaves them; another connection is told', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const a = await login(t, imapPort, box.address);
  await fill(t, a, 3);
  const b = await login(t, imapPort, box.address);
  t.regex(await b.cmd('s', 'SELECT INBOX'), /^\* 3 EXISTS/m);
  t.regex(await a.cmd('s', 'SELECT INBOX'), /^\* 3 EXISTS/m);
  t.regex(await a.cmd('d', 'STORE 2 +FLAGS.SILENT (\\Deleted)'), /^d OK/m);
  const unselected = await a.cmd('u', 'UNSELECT');
  t.deepEqual(untagged(unselected), []);
  t.regex(unselected, /^u OK UNSELECT completed/m);
  t.regex(await a.cmd('s2', 'SELECT INBOX'), /^\* 3 EXISTS/m, 'UNSELECT expunged nothing');
  t.regex(await a.cmd('k', 'SEARCH DELETED'), /^\* SEARCH 2\r\n/m);
  t.regex(await a.cmd('d2', 'STORE 3 +FLAGS.SILENT (\\Deleted)'), /^d2 OK/m);
  const closed = await a.cmd('c', 'CLOSE');
  t.deepEqual(untagged(closed), [], 'CLOSE announces nothing');
  t.regex(closed, /^c OK CLOSE completed/m);
  t.regex(await a.cmd('f', 'FETCH 1 (UID)'), /^f BAD/m, 'no folder selected after CLOSE');
  t.regex(await a.cmd('s3', 'SELECT INBOX'), /^\* 1 EXISTS/m, 'both \\Deleted messages went');
  t.regex(await a.cmd('a', 'UID SEARCH ALL'), /^\* SEARCH 1\r\n/m);
  const heard = untagged(await b.cmd('n', 'NOOP'));
  t.deepEqual(heard.filter((l) => / EXPUNGE$/.test(l)), ['* 3 EXPUNGE', '* 2 EXPUNGE'], 'the session that stayed is told');
});

test('imapflow: messageDelete by UID (STORE \\Deleted and UID EXPUNGE) removes that message only; another client hears an expunge event', async (t) => {
  const { box, imapPort } = await imapApp(t);
  const raw = await login(t, imapPort, box.address);
  await fill(t, raw, 3);
  const watcher = await imapClient(t, imapPort, box.address);
  const client = await imapClient(t, imapPort, box.address);
  const expunges: Array<{ seq?: number; uid?: number; vanished?: boolean }> = [];
  watcher.on('expunge', (e) => expunges.push(e));
  await watcher.mailboxOpen('INBOX');
  await client.mailboxOpen('INBOX');
  t.true(await client.messageDelete('2', { uid: true }));
  const left: number[] = [];
  for await (const m of client.fetch('1:*', { uid: true })) left.push(m.uid);
  t.deepEqual(left, [1, 3]);
  await watcher.noop();
  t.deepEqual(expunges.map((e) => e.seq), [2]);
});
