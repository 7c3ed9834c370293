import test from 'ava';
import { eventually, startNodes, type TestNode } from '../helpers/nodes.js';
import { sendMail } from '../helpers/smtp.js';
import { idleAcrossNodes, mailbox, raw, SENDER } from './idle-across-nodes.js';

// Mail on two nodes sharing one PostgreSQL database (DECISIONS.md section 17): what arrives on
// either is listed once on both, and IMAP IDLE on one node hears of mail that arrived on the other
// at once (NOTIFY on commit, emails/pg-changes.ts), not at its next poll.

/** Every listed email of the key on a node (all pages, bounded). */
async function listAll(node: TestNode, key: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const r = await node.get(`/v1/emails?per_page=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
    if (r.status !== 200) throw new Error(`list on ${node.name}: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.data);
    cursor = r.body.meta.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('list did not end');
}

test.serial('mail sent over SMTP to either node is listed exactly once through GET /v1/emails and sync on both', async (t) => {
  t.timeout(240_000);
  const { cluster, nodes: [a, b] } = await startNodes(t, 2);
  const key = await cluster.tenantKey();
  const address = await mailbox(t, a!, key, 'listed.two-nodes.test');
  const subjects: string[] = [];
  for (let i = 0; i < 12; i++) {
    const node = i % 2 === 0 ? a! : b!;
    const subject = `listed ${i} via ${node.name}`;
    await sendMail(node.process.smtpPort, { from: SENDER, to: [address] }, raw(address, subject));
    subjects.push(subject);
  }
  for (const node of [a!, b!]) {
    // Paged by 7, so the cursor crosses mail stored by both nodes.
    const items = await eventually(`all mail listed on ${node.name}`, async () => {
      const all = await listAll(node, key);
      return all.length >= subjects.length ? all : undefined;
    }, 60_000, 200);
    t.deepEqual(items.map((i) => i.subject).sort(), [...subjects].sort(), `node ${node.name} lists each message once`);
    t.is(new Set(items.map((i) => i.id)).size, items.length);
    // The dashboard's live inbox polls sync: it sees mail stored by either node, once.
    const sync = await node.get(`/v1/emails/sync?since=${encodeURIComponent(new Date(0).toISOString())}&per_page=100`, key);
    t.is(sync.status, 200, JSON.stringify(sync.body));
    t.deepEqual(sync.body.data.map((i: any) => i.subject).sort(), [...subjects].sort(), `sync on node ${node.name}`);
  }
});

test.serial('an imapflow client IDLE on node B sees EXISTS for mail that arrived over SMTP on node A before the poll (slowed to a minute) could find it', async (t) => {
  t.timeout(240_000);
  // How promptly (under 1 s) is the timing lane's check: test/timing/two-nodes-idle.test.ts.
  const latencies = await idleAcrossNodes(t);
  t.is(latencies.length, 3);
});
