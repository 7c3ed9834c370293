import type { ExecutionContext } from 'ava';
import { imapClient, PASSWORD } from '../helpers/imap.js';
import { eventually, startNodes, type TestNode } from '../helpers/nodes.js';
import { sendMail } from '../helpers/smtp.js';

// Shared by test/db/two-nodes-mail.test.ts and the timing lane (test/timing/two-nodes-idle.test.ts).

/** IDLE's poll slowed to a minute on every node: what arrives in under a second came by NOTIFY. */
export const SLOW_POLL = { MAILSTEAD_IMAP_IDLE_POLL_MS: '60000' };
export const SENDER = 'sender@client.example';

/** A tenant with a domain and one mailbox (password PASSWORD), made through node `a`. */
export async function mailbox(t: ExecutionContext, a: TestNode, key: string, domain: string): Promise<string> {
  const d = await a.post('/v1/create/domain', key, { Domain: domain });
  t.is(d.status, 200);
  t.is((await a.pollTask('/v1/get/domain', key, d.body.task_id)).body.status, 'completed');
  const address = `box@${domain}`;
  const m = await a.post('/v1/create/mailbox/single', key, { Email_fullname: 'Two Nodes', single_bulk: 'single', Domain: domain, Params: { email_id: address, password: PASSWORD } });
  t.is(m.status, 200);
  t.is((await a.pollTask('/v1/get/mailbox/single', key, m.body.task_id)).body.status, 'completed');
  return address;
}

export const raw = (to: string, subject: string) =>
  `From: ${SENDER}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '-')}-${Date.now()}@client.example>\r\n\r\n${subject}\r\n`;

/**
 * Two nodes with IDLE's poll slowed to a minute; an imapflow client IDLE on node B; three messages
 * sent one at a time over SMTP on node A. Returns, per message, the milliseconds from A's 250 to
 * the EXISTS on B. Each is waited for at most 30 s, half the slowed poll: an EXISTS at all means
 * NOTIFY brought it.
 */
export async function idleAcrossNodes(t: ExecutionContext): Promise<number[]> {
  const { cluster, nodes: [a, b] } = await startNodes(t, 2, SLOW_POLL);
  const key = await cluster.tenantKey();
  const address = await mailbox(t, a!, key, 'idle.two-nodes.test');
  // The first delivery starts each node's storage path (seconds under tsx): not what is measured.
  await sendMail(a!.process.smtpPort, { from: SENDER, to: [address] }, raw(address, 'warm'));
  await eventually('warm-up listed on B', async () => ((await b!.get('/v1/emails', key)).body.data?.length === 1 ? true : undefined), 60_000);

  const client = await imapClient(t, b!.port('imap_port'), address);
  const exists: Array<{ count: number; at: number }> = [];
  client.on('exists', (e: { count: number }) => exists.push({ count: e.count, at: Date.now() }));
  const box = await client.mailboxOpen('INBOX');
  t.is(box.exists, 1);
  const latencies: number[] = [];
  for (let n = 2; n <= 4; n++) {
    await eventually('client idling', async () => (client.idling ? true : undefined), 15_000, 10);
    const sent = Date.now();
    await sendMail(a!.process.smtpPort, { from: SENDER, to: [address] }, raw(address, `idle ${n}`));
    const acked = Date.now();
    const seen = await eventually(`EXISTS ${n} on B`, async () => exists.find((e) => e.count >= n), 30_000, 5);
    latencies.push(seen.at - acked);
    t.log(`SMTP on A took ${acked - sent} ms; 250 to EXISTS ${n} on B: ${seen.at - acked} ms`);
  }
  return latencies;
}
