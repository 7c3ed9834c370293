import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { pollUntil, waitForEmails } from '../helpers/emails.js';
import { provision, sendMail } from '../helpers/smtp.js';
import { startZone } from '../dns/zone.js';

const raw = (from: string, id: string) => `From: ${from}\r\nTo: fay@rep.test\r\nSubject: news ${id}\r\nMessage-ID: <${id}@client.example>\r\n\r\nHere is the news of the week.\r\n`;

/** The copy of message `id`, once `folder` lists `count` messages (waitForEmails), in full with its folder. */
async function stored(app: Awaited<ReturnType<typeof startTestApp>>, key: string, id: string, count: number, folder = 'INBOX'): Promise<any> {
  const list = await waitForEmails(app, key, count, `folder=${folder}`);
  const item = list.find((e) => e.subject === `news ${id}`);
  if (!item) throw new Error(`${id} is not in ${folder}: ${JSON.stringify(list.map((e) => e.subject))}`);
  return { ...(await app.get(`/v1/emails/${item.id}`, key)).body.data, folder: item.folder };
}

test('authenticated senders: an allow entry counts (ALLOWLIST), a rescued sender becomes KNOWN_CORRESPONDENT, DMARC p=quarantine failing is junk', async (t) => {
  const zone = await startZone(t);
  zone.txt('friend.example', 'v=spf1 ip4:127.0.0.1 -all');
  zone.txt('_dmarc.friend.example', 'v=DMARC1; p=none');
  zone.txt('strict.example', 'v=spf1 ip4:192.0.2.1 -all');
  zone.txt('_dmarc.strict.example', 'v=DMARC1; p=quarantine');
  const app = await startTestApp(t, { env: { MAILSTEAD_DNS_SERVERS: `127.0.0.1:${zone.port}` } });
  const { key } = await provision(app, 'rep.test', ['fay']);

  t.is((await app.post('/v1/spam/lists', key, { kind: 'allow', pattern: '@friend.example', mailbox: 'fay@rep.test' })).status, 200);
  await sendMail(app.smtpPort, { from: 'pal@friend.example', to: ['fay@rep.test'] }, raw('Pal <pal@friend.example>', 'f1'));
  const allowed = await stored(app, key, 'f1', 1);
  t.is(allowed.auth.spf.result, 'pass');
  t.like(allowed.spam, { verdict: 'ham' });
  t.true(allowed.spam.reasons.some((r: any) => r.rule === 'ALLOWLIST'), JSON.stringify(allowed.spam));

  // Without the entry, a sender the mailbox rescued from Junk is a known correspondent.
  const entries = (await app.get('/v1/spam/lists', key)).body.data;
  for (const e of entries) t.is((await app.del(`/v1/spam/lists/${e.id}`, key)).status, 200);
  t.deepEqual((await app.post(`/v1/emails/${allowed.id}/not-junk`, key)).body, { status: 'success' });
  await sendMail(app.smtpPort, { from: 'pal@friend.example', to: ['fay@rep.test'] }, raw('Pal <pal@friend.example>', 'f2'));
  const known = await stored(app, key, 'f2', 2);
  t.true(known.spam.reasons.some((r: any) => r.rule === 'KNOWN_CORRESPONDENT'), JSON.stringify(known.spam));

  await sendMail(app.smtpPort, { from: 'boss@strict.example', to: ['fay@rep.test'] }, raw('Boss <boss@strict.example>', 'q1'));
  const quarantined = await stored(app, key, 'q1', 1, 'Junk');
  t.is(quarantined.auth.dmarc.result, 'fail');
  t.is(quarantined.folder, 'Junk');
  t.like(quarantined.spam, { verdict: 'junk' });
  t.true(quarantined.spam.reasons.some((r: any) => r.rule === 'DMARC_QUARANTINE'));
  const inJunk = await pollUntil(app, key, '/v1/emails?folder=Junk', (r) => r.body.data.length === 1);
  t.is(inJunk.body.data[0].id, quarantined.id);
});
