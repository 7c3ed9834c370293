import test from 'ava';
import { eventually, nodeMailbox, startNodes } from '../helpers/nodes.js';
import { sendMail } from '../helpers/smtp.js';

// Two server processes on one PostgreSQL database (DECISIONS.md sections 17 and 19): a vacation
// reply goes once per sender per period whichever node stores the mail, because the memory of
// replies sent is the database's.

test.serial('mail from one sender through both nodes gets one vacation reply; another sender gets theirs', async (t) => {
  t.timeout(180_000);
  const { cluster, nodes: [a, b] } = await startNodes(t);
  const key = await cluster.tenantKey();
  const address = await nodeMailbox(t, a!, key, 'away.example', 'Away Box');
  const put = await b!.request('PUT', `/v1/mailboxes/${encodeURIComponent(address)}/vacation`, { key, body: { enabled: true, body: 'Out of office.' } });
  t.is(put.status, 200);
  const mail = (from: string, n: number) => `From: <${from}>\r\nTo: <${address}>\r\nSubject: note ${n}\r\nMessage-ID: <vac${n}.${Date.now()}@remote.example>\r\n\r\nHi.\r\n`;
  const bob = 'bob@remote.example';
  for (let n = 0; n < 6; n++) {
    const node = n % 2 === 0 ? a! : b!;
    await sendMail(node.port('smtp_port'), { from: bob, to: [address] }, mail(bob, n));
  }
  await sendMail(b!.port('smtp_port'), { from: 'carol@remote.example', to: [address] }, mail('carol@remote.example', 6));
  await eventually('all seven stored', async () => {
    const r = await a!.get('/v1/emails?per_page=100', key);
    return r.body.data?.length === 7 ? true : undefined;
  });
  const replies = await cluster.admin.db.selectFrom('outbound').select(['rcpt_to', 'mail_from']).execute();
  t.deepEqual(replies.map((r) => r.rcpt_to).sort(), ['bob@remote.example', 'carol@remote.example']);
  t.true(replies.every((r) => r.mail_from === ''));
});
