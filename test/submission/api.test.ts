import test from 'ava';
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { waitForEmails } from '../helpers/emails.js';
import { createAlias, mailboxRow } from '../helpers/mailboxes.js';
import { makeInbox } from '../helpers/emails.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, startWorld, waitForItems } from '../outbound/world.js';

const SENDER = `sender@${ALIAS_DOMAIN}`;
const FRIEND = `friend@${ALIAS_DOMAIN}`;
const DEST = `dest@${REMOTE_DOMAIN}`;

test('POST /v1/mail/send renders the message and takes the submission path: queue with DKIM, hosted delivery, Bcc hidden, Sent copy', async (t) => {
  const { app, key, sink, zone } = await startWorld(t, { mailboxes: ['sender', 'friend'], aliases: {} });
  const r = await app.post('/v1/mail/send', key, {
    from: SENDER, to: [DEST], cc: [FRIEND], bcc: [`hidden@${REMOTE_DOMAIN}`], subject: 'Grüße', text: 'plain body', html: '<p>html body</p>',
    attachments: [{ filename: 'note.txt', content_type: 'text/plain', content: Buffer.from('attached').toString('base64') }],
    in_reply_to: '<earlier@remote.test>',
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.status, 'accepted');
  t.regex(r.body.message_id, /^<[^@]+@alias\.test>$/);

  const first = await sink.nth(1);
  const second = await sink.nth(2).catch(() => null);
  const all = [first, ...(second ? [second] : [])];
  t.deepEqual(all.flatMap((m) => m.to).sort(), [DEST, `hidden@${REMOTE_DOMAIN}`]);
  const parsed = await simpleParser(first.raw);
  t.is(parsed.messageId, r.body.message_id);
  t.is(parsed.subject, 'Grüße');
  t.is(parsed.inReplyTo, '<earlier@remote.test>');
  t.is(parsed.text?.trim(), 'plain body');
  t.is(parsed.attachments[0]?.content.toString(), 'attached');
  t.is(parsed.headers.get('bcc'), undefined, 'Bcc is not in the header');
  t.is(first.from, SENDER);
  const resolver = zone.resolver();
  const verdict = await authenticate(first.raw, {
    ip: '127.0.0.1', helo: 'mx.mailstead.test', sender: first.from, mta: 'mx.remote.test',
    resolver: (name: string, rrtype: string) => resolver.resolve(name, rrtype) as Promise<any>,
  });
  t.is(verdict.dkim.results.find((x: any) => x.signingDomain === ALIAS_DOMAIN)?.status.result, 'pass');
  await waitForItems(app, key, (items) => items.length === 2 && items.every((i) => i.kind === 'submission'), 'two submission items');

  const friend = (await mailboxRow(app, FRIEND))!;
  const [arrived] = await waitForEmails(app, key, 1, `&mailbox_id=${friend.id}`);
  t.is(arrived.subject, 'Grüße');
  const sender = (await mailboxRow(app, SENDER))!;
  // The Sent copy is stored by ingest like the delivered ones, after the 200.
  const sent = await waitForEmails(app, key, 1, `&mailbox_id=${sender.id}&folder=Sent`);
  t.is(sent.length, 1, JSON.stringify(sent));
  t.is(sent[0].subject, 'Grüße');
  t.true(sent[0].is_read, 'the Sent copy is read');
});

test('an alias with sender_allowed may be the from; its Sent copy goes to the first mailbox of its goto', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['sender', 'friend'], aliases: {} });
  const done = await createAlias(app, key, ALIAS_DOMAIN, { address: `team@${ALIAS_DOMAIN}`, goto: [`outside@${REMOTE_DOMAIN}`, FRIEND, SENDER], sender_allowed: true });
  t.is(done.body.status, 'completed');
  const r = await app.post('/v1/mail/send', key, { from: `Team@${ALIAS_DOMAIN}`, to: [SENDER], subject: 'from the team', text: 'hi' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const friend = (await mailboxRow(app, FRIEND))!;
  const sent = await waitForEmails(app, key, 1, `&mailbox_id=${friend.id}&folder=Sent`);
  t.is(sent.length, 1);
  const sender = (await mailboxRow(app, SENDER))!;
  const [arrived] = await waitForEmails(app, key, 1, `&mailbox_id=${sender.id}`);
  t.is(arrived.subject, 'from the team');
  t.is((await app.get(`/v1/emails?mailbox_id=${sender.id}&folder=Sent`, key)).body.data.length, 0);
});

test('POST /v1/mail/send errors name the field: 422 for a from that is not ours or may not send, bad addresses, too many recipients, unknown hosted recipients, bad attachments; 401 and 403', async (t) => {
  const { app, key } = await startWorld(t, { mailboxes: ['sender'], aliases: {} });
  t.is((await createAlias(app, key, ALIAS_DOMAIN, { address: `quiet@${ALIAS_DOMAIN}`, goto: [SENDER] })).body.status, 'completed');
  t.is((await createAlias(app, key, ALIAS_DOMAIN, { catch_all: true, goto: [SENDER], sender_allowed: true })).body.status, 'completed');
  const stranger = await makeInbox(app);
  const base = { from: SENDER, to: [DEST], subject: 's', text: 't' };
  const cases: Array<[Record<string, unknown>, RegExp, string]> = [
    [{ ...base, from: stranger.address }, /from/, "another tenant's mailbox"],
    [{ ...base, from: `quiet@${ALIAS_DOMAIN}` }, /from/, 'alias without sender_allowed'],
    [{ ...base, from: `anyone@${ALIAS_DOMAIN}` }, /from/, 'catch-all grants nothing'],
    [{ ...base, from: 'not an address' }, /from/, 'malformed from'],
    [{ from: SENDER, subject: 's' }, /to/, 'to missing'],
    [{ ...base, to: [] }, /to/, 'to empty'],
    [{ ...base, cc: ['bad@'] }, /cc/, 'malformed cc'],
    [{ ...base, to: Array.from({ length: 60 }, (_, i) => `a${i}@x.test`), cc: Array.from({ length: 41 }, (_, i) => `c${i}@x.test`) }, /100 recipients/, '101 recipients'],
    [{ ...base, to: [`nobody@${stranger.domain}`] }, /to\[0\]/, "unknown hosted recipient (a domain without catch-all)"],
    [{ ...base, attachments: [{ filename: 'a', content_type: 'text/plain', content: '@@@' }] }, /attachments\[0\]\.content/, 'bad base64'],
    [{ ...base, subject: 5 }, /subject/, 'subject not a string'],
  ];
  for (const [body, reason, why] of cases) {
    const r = await app.post('/v1/mail/send', key, body);
    t.is(r.status, 422, `${why}: ${JSON.stringify(r.body)}`);
    t.is(r.body.status, 'error', why);
    t.regex(r.body.reason, reason, why);
  }
  t.is((await app.post('/v1/mail/send', undefined, base)).status, 401);
  const readOnly = await app.keyFor({ perms: ['read'] });
  t.is((await app.post('/v1/mail/send', readOnly, base)).status, 403);
  const queued = await app.app.db.selectFrom('outbound').select('id').execute();
  t.is(queued.length, 0, 'nothing was queued by a refused request');

  const spec = await app.get('/openapi.json');
  const op = spec.body.paths['/api/v1/mail/send']?.post;
  t.truthy(op, 'documented in OpenAPI');
  const schema = op.requestBody.content['application/json'].schema;
  t.deepEqual([...schema.required].sort(), ['from', 'subject', 'to']);
  t.truthy(schema.properties.in_reply_to);
});
