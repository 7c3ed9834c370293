import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { openPostgresDatabase } from '../../src/db/postgres.js';
import { eventually, startNodes, type TestNode } from '../helpers/nodes.js';
import { freshPostgresDatabase } from '../helpers/pg.js';
import { rawSession } from '../helpers/smtp.js';

// The recipient resolver's cache on PostgreSQL (db/pg-directory.ts): each node reuses its answers
// until a commit on ANY node changes domains, mailboxes or aliases (migration 014's NOTIFY), and
// reuses none while it could miss such a commit (its LISTEN connection down).

/** Far longer than a NOTIFY takes on a loaded 2-core host; a cached answer nobody invalidates would never change. */
const SEEN_WITHIN_MS = 10_000;
const TASK_MS = 30_000;

/** The reply to RCPT TO:<address> on a node, in a session of its own (refusals in one session get slowed). */
async function rcpt(node: TestNode, address: string): Promise<string> {
  const s = await rawSession(node.process.smtpPort);
  try {
    await s.command('EHLO client.example');
    await s.command('MAIL FROM:<sender@client.example>');
    return await s.command(`RCPT TO:<${address}>`);
  } finally {
    s.close();
  }
}

/** Polls RCPT on `node` until its reply starts with `code`; resolves with the time it took. */
async function rcptBecomes(node: TestNode, address: string, code: '250' | '550'): Promise<number> {
  const started = Date.now();
  await eventually(`RCPT ${address} on ${node.name} answered ${code}`, async () => ((await rcpt(node, address)).startsWith(code) ? true : undefined), SEEN_WITHIN_MS, 50);
  return Date.now() - started;
}

async function task(t: ExecutionContext, node: TestNode, key: string, path: string, getPath: string, body: unknown): Promise<void> {
  const r = await node.post(path, key, body);
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is((await node.pollTask(getPath, key, r.body.task_id, TASK_MS)).body.status, 'completed');
}

const createMailbox = (t: ExecutionContext, node: TestNode, key: string, domain: string, address: string) =>
  task(t, node, key, '/v1/create/mailbox/single', '/v1/get/mailbox/single', { Email_fullname: 'Directory', single_bulk: 'single', Domain: domain, Params: { email_id: address, password: 0 } });
const createAlias = (t: ExecutionContext, node: TestNode, key: string, domain: string, address: string, goto: string) =>
  task(t, node, key, '/v1/create/alias', '/v1/get/alias', { Domain: domain, Params: { address, goto } });

test.serial('a mailbox and an alias deleted through one node are refused at RCPT on the other, which had them cached', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2);
  const key = await cluster.tenantKey();
  const domain = 'gone.directory.test';
  await task(t, b!, key, '/v1/create/domain', '/v1/get/domain', { Domain: domain });
  for (const local of ['keep', 'gone']) await createMailbox(t, b!, key, domain, `${local}@${domain}`);
  await createAlias(t, b!, key, domain, `list@${domain}`, `keep@${domain}`);
  // Answered (and remembered) on A, several times each.
  for (let i = 0; i < 3; i++) for (const local of ['keep', 'gone', 'list']) t.regex(await rcpt(a!, `${local}@${domain}`), /^250/, `${local} on A`);

  await task(t, b!, key, '/v1/delete/mailbox/bulk', '/v1/get/delete/mailbox/bulk', { Mailboxes: [`gone@${domain}`] });
  const mailboxMs = await rcptBecomes(a!, `gone@${domain}`, '550');
  await task(t, b!, key, '/v1/delete/alias/bulk', '/v1/get/delete/alias/bulk', { Aliases: [`list@${domain}`] });
  const aliasMs = await rcptBecomes(a!, `list@${domain}`, '550');
  t.log(`A refused the deleted mailbox after ${mailboxMs} ms, the deleted alias after ${aliasMs} ms`);
  t.regex(await rcpt(a!, `keep@${domain}`), /^250/, 'what was not deleted is still accepted');
});

test.serial('a mailbox and an alias created through one node are accepted at RCPT on the other, which had refused them', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2);
  const key = await cluster.tenantKey();
  const domain = 'new.directory.test';
  await task(t, a!, key, '/v1/create/domain', '/v1/get/domain', { Domain: domain });
  for (let i = 0; i < 3; i++) for (const local of ['fresh', 'team']) t.regex(await rcpt(a!, `${local}@${domain}`), /^550/, `${local} on A before`);

  await createMailbox(t, b!, key, domain, `fresh@${domain}`);
  const mailboxMs = await rcptBecomes(a!, `fresh@${domain}`, '250');
  await createAlias(t, b!, key, domain, `team@${domain}`, `fresh@${domain}`);
  const aliasMs = await rcptBecomes(a!, `team@${domain}`, '250');
  t.log(`A accepted the new mailbox after ${mailboxMs} ms, the new alias after ${aliasMs} ms`);
});

test.serial('the change count stands still between directory changes, and moves at every call while the LISTEN connection is down', async (t) => {
  t.timeout(120_000);
  const url = await freshPostgresDatabase(t);
  const [node, other] = [await openPostgresDatabase(url), await openPostgresDatabase(url, { max: 2 })];
  t.teardown(async () => { await node.close(); await other.close(); });
  const still = async (what: string) => eventually(what, async () => {
    const c = node.changes();
    await new Promise((r) => setTimeout(r, 20));
    return node.changes() === c ? c : undefined;
  }, 20_000, 20);

  const first = await still('the count settles once the LISTEN is in place');
  // Writes that change no answer leave it: quota usage of mailboxes, DNS check times of domains.
  await node.db.updateTable('mailboxes').set({ used_bytes: 1 }).where('id', '=', -1).execute();
  await other.db.updateTable('domains').set({ last_checked_at: 1 }).where('id', '=', -1).execute();
  t.is(node.changes(), first);

  // Another node's directory statement (no row taken, but a committed statement all the same): NOTIFYed, and the count moves
  // by that one notification. Notifications arrive in commit order, so it is also the marker that
  // the writes above, committed before it, sent none.
  await other.db.deleteFrom('aliases').where('id', '=', -1).execute();
  const second = await still('the count settles after the other node\'s commit');
  t.is(second, first + 1);

  // The node's own directory write: the count moves at once, before any NOTIFY.
  const before = node.changes();
  await node.db.updateTable('mailboxes').set({ address: 'x@y.test' }).where('id', '=', -1).execute();
  t.not(node.changes(), before);

  // The LISTEN connection cut: no answer may be reused until it is back (then the count stands still again).
  await still('the count settles after the own write');
  const { rows } = await node.session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await sql`SELECT pg_terminate_backend(${rows[0]!.pid}::int)`.execute(other.db);
  await eventually('the count moves at every call while the session is down', async () => (node.changes() !== node.changes() ? true : undefined), 20_000, 10);
  const after = await still('the count settles once the session is back');
  t.true(after > second);
});
