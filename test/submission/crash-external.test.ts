import { connect, createServer, type Socket } from 'node:net';
import test from 'ava';
import Database from 'better-sqlite3';
import { databaseFile } from '../../src/db/connection.js';
import { tempDir } from '../helpers/app.js';
import { ingestBacklog, runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { submitUntilKilled } from './kill-under-load.js';
import { waitFor } from '../helpers/webhooks.js';
import { startMxZone } from '../outbound/mx-zone.js';
import { outboundEnv, REMOTE_DOMAIN, REMOTE_MX, startSink } from '../outbound/world.js';

const PASSWORD = 'password-123';
const DOMAIN = 'extcrash.test';
const SENDER = `sender@${DOMAIN}`;
const FRIEND = `friend@${DOMAIN}`;

/** The implicit-TLS submission port the server logged. */
async function submissionsPort(server: ServerProcess): Promise<number> {
  return (await waitFor(() => Number(/"submissions_port":(\d+)/.exec(server.output())?.[1]) || undefined, 'submissions_port logged', 10_000))!;
}

/**
 * Message n, to an external address of its own (n names it at the sink); odd ones also to the
 * hosted friend, so both kinds of record carry external recipients: the Sent copy's alone, and
 * the one shared with the hosted copies.
 */
const message = (n: number) => {
  const to = n % 2 === 0 ? [`dest${n}@${REMOTE_DOMAIN}`] : [`dest${n}@${REMOTE_DOMAIN}`, FRIEND];
  return {
    envelope: { from: SENDER, to },
    raw: `From: <${SENDER}>\r\nTo: ${to.map((a) => `<${a}>`).join(', ')}\r\nSubject: ext ${n}\r\nMessage-ID: <ext-${n}@${DOMAIN}>\r\n\r\nbody ${n}\r\n`,
  };
};

test('SIGKILL after 250s of external submissions: after a restart each arrives at the remote once, signed, and each Sent copy is there once', async (t) => {
  t.timeout(240_000);
  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  const sink = await startSink(t, { tls: false });
  // Until the kill the remote greets nobody, so no delivery completes before it (a delivery cut
  // short by a crash is sent again: SMTP's at-least-once, not what this test is about); afterwards
  // connections pass through to the sink.
  let hold = true;
  const sockets = new Set<Socket>();
  const front = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    if (hold) return;
    const up = connect(sink.port, '127.0.0.1');
    s.pipe(up).pipe(s);
    up.on('error', () => s.destroy());
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => { for (const s of sockets) s.destroy(); front.close(); });
  const env = { ...outboundEnv(zone, (front.address() as { port: number }).port, '1') };

  const dataDir = tempDir(t, 'mailstead-subext-crash-');
  t.is((await runCli(dataDir, ['tenant', 'create', 'subext', '--plan', 'active'])).code, 0);
  const key = (await runCli(dataDir, ['key', 'create', '--tenant', 'subext', '--perms', 'read,write,inbound'])).stdout.trim();
  let server = await startServerProcess(dataDir, env);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/api${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };
  const completed = (path: string, taskId: number) =>
    waitFor(async () => (await call('GET', `${path}?task_id=${taskId}`)).body.status === 'completed' || undefined, `task ${taskId}`, 30_000);
  const domain = await call('POST', '/v1/create/domain', { Domain: DOMAIN });
  await completed('/v1/get/domain', domain.body.task_id);
  for (const address of [SENDER, FRIEND]) {
    const box = await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Crash Box', single_bulk: 'single', Domain: DOMAIN, Params: { email_id: address, password: PASSWORD } });
    await completed('/v1/get/mailbox/single', box.body.task_id);
  }

  // Four sessions (one login each) submit numbered messages back to back until the server is killed under them.
  const port = await submissionsPort(server);
  const { acked, attempted } = await submitUntilKilled(t, server, { port, sessions: 4, atLeast: 40, user: SENDER, pass: PASSWORD, message });
  t.is(sink.messages.length, 0, 'nothing was delivered before the kill');

  hold = false;
  for (const s of sockets) s.destroy();
  server = await startServerProcess(dataDir, env);
  const numberOf = (rcpt: string) => Number(new RegExp(`^dest(\\d+)@${REMOTE_DOMAIN.replace('.', '\\.')}$`).exec(rcpt)?.[1]);
  const arrived = () => new Set(sink.messages.flatMap((m) => m.to.map(numberOf)));
  await waitFor(() => [...acked].every((n) => arrived().has(n)) || undefined, 'every acknowledged message at the remote', 120_000);
  // Whatever else is still on its way (messages whose 250 the kill cut off) is sent too, so a second
  // copy would show: wait until ingest's backlog is empty and no outbound item is left queued (an
  // item is marked sent only after the remote's 250, so by then the sink holds it).
  const db = new Database(databaseFile(dataDir), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  const queued = () => (db.prepare(`SELECT count(*) AS n FROM outbound WHERE status = 'queued'`).get() as { n: number }).n;
  await waitFor(async () => ((await ingestBacklog(server.httpPort)) === 0 && queued() === 0) || undefined, 'the outbound queue drained', 60_000);

  const atRemote = new Map<number, number>();
  for (const m of sink.messages) {
    t.is(m.to.length, 1, 'one recipient per delivery');
    const n = numberOf(m.to[0]);
    t.true(Number.isInteger(n) && n < attempted, `unexpected recipient ${m.to[0]}`);
    t.is(m.from, SENDER);
    const head = m.raw.toString('latin1').split('\r\n\r\n')[0];
    t.regex(head, new RegExp(`^DKIM-Signature:[^]*?d=${DOMAIN.replace('.', '\\.')};`, 'im'), `message ${n} is signed`);
    t.regex(head, new RegExp(`^Subject: ext ${n}$`, 'm'), `message ${n} has its own bytes`);
    t.notRegex(head, /^(Return-Path|Received):/im, 'the hosted delivery\'s front fields stay here');
    atRemote.set(n, (atRemote.get(n) ?? 0) + 1);
  }
  for (const n of acked) t.is(atRemote.get(n), 1, `acknowledged message ${n} arrived once`);
  for (const [n, c] of atRemote) t.is(c, 1, `message ${n} arrived once`);

  // Every acknowledged message's Sent copy (and the odd ones' INBOX copy) is stored once, and its queue item names it.
  const rows = (await waitFor(() => {
    const r = db.prepare(`SELECT e.id, m.address, e.folder, e.subject FROM emails e JOIN mailboxes m ON m.id = e.mailbox_id WHERE e.subject LIKE 'ext %'`).all() as Array<{ id: number; address: string; folder: string; subject: string }>;
    const sent = new Set(r.filter((x) => x.folder === 'Sent').map((x) => x.subject));
    return [...acked].every((n) => sent.has(`ext ${n}`)) ? r : undefined;
  }, 'every Sent copy stored', 60_000))!;
  const copies = (address: string, folder: string) => {
    const seen = new Map<number, number>();
    for (const r of rows.filter((x) => x.address === address && x.folder === folder)) {
      const n = Number(/^ext (\d+)$/.exec(r.subject)?.[1]);
      seen.set(n, (seen.get(n) ?? 0) + 1);
    }
    return seen;
  };
  const sent = copies(SENDER, 'Sent');
  const inbox = copies(FRIEND, 'INBOX');
  for (const n of acked) {
    t.is(sent.get(n), 1, `acknowledged message ${n} is in Sent once`);
    if (n % 2 === 1) t.is(inbox.get(n), 1, `acknowledged message ${n} is in the friend's INBOX once`);
  }
  for (const [n, c] of [...sent, ...inbox]) t.is(c, 1, `message ${n} is stored once per folder`);
  const sentIds = new Map(rows.filter((r) => r.folder === 'Sent').map((r) => [r.subject, r.id]));
  const items = db.prepare(`SELECT rcpt_to, email_id, status FROM outbound WHERE kind = 'submission'`).all() as Array<{ rcpt_to: string; email_id: number | null; status: string }>;
  for (const i of items) {
    const n = numberOf(i.rcpt_to);
    t.is(i.email_id, sentIds.get(`ext ${n}`) ?? -1, `message ${n}'s item names its Sent copy`);
  }
  t.is(items.length, atRemote.size, 'one item per message');
  t.log(`${acked.size} acknowledged, ${atRemote.size} at the remote, ${sent.size} in Sent, ${attempted} attempted`);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});
