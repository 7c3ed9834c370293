import test from 'ava';
import { createAlias } from '../helpers/mailboxes.js';
import { makeInbox } from '../helpers/emails.js';
import { lineSession, PASSWORD, plainToken, rawMessage, submissionApp, submit } from './world.js';

test('send-as matrix: own address and an active alias with sender_allowed pass; anything else is 553 5.7.1 at MAIL or after DATA', async (t) => {
  const { app, box } = await submissionApp(t, { count: 2 });
  const me = box.address;
  const colleague = box.mailboxes[1].address;
  const d = box.domain;
  const alias = async (params: Record<string, unknown>) => {
    const done = await createAlias(app, box.key, d, params);
    t.is(done.body.status, 'completed', JSON.stringify(done.body));
  };
  await alias({ address: `team@${d}`, goto: [me, colleague], sender_allowed: true });
  await alias({ address: `quiet@${d}`, goto: [me], sender_allowed: false });
  await alias({ address: `other@${d}`, goto: [colleague], sender_allowed: true });
  await alias({ address: `paused@${d}`, goto: [me], sender_allowed: true });
  const edit = await app.post('/v1/edit/alias', box.key, { address: `paused@${d}`, active: false });
  t.is(edit.status, 200, JSON.stringify(edit.body));
  t.is((await app.pollTask('/v1/get/alias', box.key, edit.body.task_id)).body.status, 'completed');
  await alias({ catch_all: true, goto: [me], sender_allowed: true });
  const stranger = await makeInbox(app);

  const send = (from: string, headerFrom = from, port: 'starttls' | 'implicit' = 'implicit') =>
    submit(app, port, me, { from, to: [colleague] }, rawMessage({ from: headerFrom, to: colleague, subject: `as ${from}` }));

  for (const from of [me, me.toUpperCase(), `team@${d}`]) {
    const r = await send(from);
    t.true(r.ok, `${from}: ${JSON.stringify(r)}`);
    if (r.ok) t.regex(r.info.response, /^250 /);
  }
  t.true((await send(`team@${d}`, `team@${d}`, 'starttls')).ok, 'the STARTTLS port too');

  const refusedAtMail = [
    [`quiet@${d}`, 'alias without sender_allowed'],
    [`paused@${d}`, 'inactive alias'],
    [`other@${d}`, 'alias of another mailbox'],
    [`anything@${d}`, 'catch-all grants nothing'],
    [colleague, 'another mailbox of the tenant'],
    [stranger.address, "another tenant's mailbox"],
    ['someone@elsewhere.test', 'a foreign address'],
  ];
  for (const [from, why] of refusedAtMail) {
    const r = await send(from);
    t.false(r.ok, why);
    if (!r.ok) {
      t.is(r.err.responseCode, 553, why);
      t.regex(r.err.response ?? '', /^553 5\.7\.1 /, why);
    }
  }

  const fromMismatch = [
    [colleague, 'From: names another mailbox'],
    [`quiet@${d}`, 'From: names an alias without sender_allowed'],
  ];
  for (const [headerFrom, why] of fromMismatch) {
    const r = await send(me, headerFrom);
    t.false(r.ok, why);
    if (!r.ok) t.regex(r.err.response ?? '', /^553 5\.7\.1 /, why);
  }
});

test('From: header tricks: several addresses, two headers, none, and encoded words hiding an address are 553 5.7.1', async (t) => {
  const { app, box } = await submissionApp(t, { count: 2 });
  const me = box.address;
  const colleague = box.mailboxes[1].address;
  const tricks: Array<[string, string]> = [
    [`From: <${me}>, <${colleague}>\r\n`, 'two addresses'],
    [`From: <${me}>\r\nFrom: <${colleague}>\r\n`, 'two From: headers'],
    [`From: friends: <${me}>, <${colleague}>;\r\n`, 'a group of two'],
    [`From: =?utf-8?Q?${colleague.replace('@', '=40')}?=\r\n`, 'an encoded word that decodes to another address'],
    [`From: =?utf-8?B?${Buffer.from(`<${colleague}>, x`).toString('base64')}?= <${me}>\r\n`, 'an encoded word that decodes to a second address'],
  ];
  for (const [headers, why] of tricks) {
    const r = await submit(app, 'implicit', me, { from: me, to: [colleague] }, rawMessage({ from: me, to: colleague, subject: 'trick', headers }));
    t.false(r.ok, why);
    if (!r.ok) t.regex(r.err.response ?? '', /^553 5\.7\.1 /, why);
  }
  const none = await submit(app, 'implicit', me, { from: me, to: [colleague] }, `To: <${colleague}>\r\nSubject: no from\r\n\r\nbody\r\n`);
  t.false(none.ok, 'no From: header');
  if (!none.ok) t.regex(none.err.response ?? '', /^553 5\.7\.1 /);
  const named = await submit(app, 'implicit', me, { from: me, to: [colleague] },
    rawMessage({ from: me, to: colleague, subject: 'named', headers: `From: =?utf-8?Q?J=C3=B6rg_M=C3=BCller?= <${me}>\r\n` }));
  t.true(named.ok, 'an encoded display name with our address is fine');
});

test('the null sender is refused, and a relay attempt without a login never gets to RCPT', async (t) => {
  const { app, box } = await submissionApp(t);
  const s = await lineSession(t, app.submissionsPort, true);
  await s.cmd('EHLO client.test');
  t.regex(await s.cmd('RCPT TO:<victim@elsewhere.test>'), /^5\d\d /, 'RCPT before MAIL and AUTH');
  t.regex(await s.cmd(`AUTH PLAIN ${plainToken(box.address, PASSWORD)}`), /^235 /);
  t.regex(await s.cmd('MAIL FROM:<>'), /^553 5\.7\.1 /);
  t.regex(await s.cmd('RCPT TO:<victim@elsewhere.test>'), /^503 /, 'no transaction without an accepted MAIL');
  t.regex(await s.cmd(`MAIL FROM:<${box.address}>`), /^250 /);
  t.regex(await s.cmd('RCPT TO:<no-domain>'), /^501 /, 'a recipient without a domain (smtp-server refuses the syntax)');
  t.regex(await s.cmd('RCPT TO:<a@-bad-.test>'), /^5\d\d /, 'a recipient with a malformed domain');
  t.regex(await s.cmd('RCPT TO:<victim@elsewhere.test>'), /^250 /, 'a logged-in sender may send anywhere');
});
