import test from 'ava';
import { startTestApp } from '../helpers/app.js';
import { deliver, inboundBody, makeInbox, postInbound, waitForEmails, waitForMessage } from '../helpers/emails.js';

test('an accepted inbound email becomes visible in list and get', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const body = inboundBody(box.address, {
    cc: 'bob@x.example, carol@y.example', bcc: ['dave@z.example'], body_html: '<p>Hi <b>there</b></p>',
    headers: { 'X-Custom': 'yes', Received: ['a', 'b'] }, unknown_field: 'dropped',
  });
  const r = await postInbound(app, box.key, body);
  t.is(r.status, 200);
  t.deepEqual(r.body, { status: 'accepted', message_id: body.message_id });
  const got = await waitForMessage(app, box.key, body.message_id as string);
  t.is(got.mailbox_id, box.mailboxId);
  t.is(got.to_email, box.address);
  t.is(got.from_email, 'ann@sender.example');
  t.is(got.from_name, 'Ann Sender');
  t.is(got.subject, body.subject);
  t.is(got.received_at, body.received_at);
  t.is(got.body_text, body.body_text);
  t.is(got.body_html, '<p>Hi <b>there</b></p>');
  t.deepEqual(got.cc, ['bob@x.example', 'carol@y.example']);
  t.deepEqual(got.bcc, ['dave@z.example']);
  // The spam filter's trace header (DECISIONS.md section 18) joins the headers given.
  const { 'x-spam-status': spamStatus, ...given } = got.headers;
  t.deepEqual(given, { 'X-Custom': 'yes', Received: ['a', 'b'] });
  t.regex(spamStatus, /^No, score=-?\d+\.\d required=\d+\.\d tests=/);
  t.deepEqual(got.auth, { spf: null, dkim: null, dmarc: null });
  t.false(got.is_read);
  t.is(got.read_at, null);
  t.false(got.has_attachments);
  t.deepEqual(got.attachments, []);
  t.is(got.snippet, body.body_text);
  t.false('unknown_field' in got);
  const list = await app.get('/v1/emails', box.key);
  t.is(list.status, 200);
  t.is(list.body.status, 'success');
  t.deepEqual(Object.keys(list.body.data[0]).sort(), ['folder', 'from_email', 'from_name', 'has_attachments', 'id', 'is_read', 'mailbox_id', 'received_at', 'size', 'snippet', 'subject', 'to_email'].sort());
  t.deepEqual(list.body.meta, { next_cursor: null, prev_cursor: null, per_page: 25 });
});

test('inbound answers 401 without a valid key and 403 without the inbound permission', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const body = inboundBody(box.address);
  t.is((await postInbound(app, undefined as unknown as string, body)).status, 401);
  t.is((await postInbound(app, 'x'.repeat(32), body)).status, 401);
  const readOnly = await app.keyFor({ tenant: box.tenant, perms: ['read', 'write'] });
  const r = await postInbound(app, readOnly, body);
  t.is(r.status, 403);
  t.is(r.body.status, 'error');
  t.is((await app.get('/v1/emails', box.key)).body.data.length, 0);
});

test('a message_id already queued or stored for the mailbox is a 409', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app, { count: 2 });
  const body = inboundBody(box.address);
  // Two posts in flight together share a group commit: exactly one wins.
  const [a, b] = await Promise.all([postInbound(app, box.key, body), postInbound(app, box.key, body)]);
  t.deepEqual([a.status, b.status].sort(), [200, 409]);
  t.is([a, b].find((x) => x.status === 409)!.body.reason, 'message_id already exists for this mailbox');
  await waitForMessage(app, box.key, body.message_id as string);
  t.is((await postInbound(app, box.key, body)).status, 409);
  // The same message_id for another mailbox is another message.
  t.is((await postInbound(app, box.key, { ...body, to_email: box.mailboxes[1].address })).status, 200);
});

test('an unknown recipient, another tenant\'s mailbox and an unhosted domain are 422', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const other = await makeInbox(app);
  for (const to of [`nobody@${box.domain}`, other.address, 'someone@not-hosted.example']) {
    const r = await postInbound(app, box.key, inboundBody(to));
    t.is(r.status, 422, to);
    t.is(r.body.reason, 'to_email is not a mailbox or alias of this account');
  }
});

test('every invalid field is a 422 naming the field, and nothing is stored', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ message_id: undefined }, /^message_id is required$/],
    [{ message_id: '' }, /^message_id/],
    [{ message_id: ['a'] }, /^message_id must be string$/],
    [{ from_email: 'not-an-address' }, /^from_email /],
    [{ from_email: undefined }, /^from_email is required$/],
    [{ to_email: 42 }, /^to_email must be string$/],
    [{ subject: undefined }, /^subject is required$/],
    [{ subject: ['x'] }, /^subject must be string$/],
    [{ subject: 'x'.repeat(10_001) }, /^subject must be at most 10000 characters$/],
    [{ received_at: '2024-01-01 12:00:00' }, /^received_at must be an ISO 8601 date-time/],
    [{ received_at: 'yesterday' }, /^received_at /],
    [{ received_at: '2025-02-30T00:00:00Z' }, /^received_at must be an ISO 8601 date-time/],
    [{ received_at: '2025-04-31T10:00:00+02:00' }, /^received_at must be an ISO 8601 date-time/],
    [{ received_at: 1704110400 }, /^received_at must be string$/],
    [{ from_name: ['Ann'] }, /^from_name must be string or null$/],
    [{ body_text: { a: 1 } }, /^body_text must be string or null$/],
    [{ body_html: 5 }, /^body_html must be string or null$/],
    [{ cc: 5 }, /^cc must be string or array or null$/],
    [{ cc: 'ok@x.example, broken' }, /^cc /],
    [{ bcc: ['ok@x.example', 'bad'] }, /^bcc\[1\] /],
    [{ headers: ['X-A: b'] }, /^headers must be object or null$/],
    [{ headers: { 'X-A': 5 } }, /^headers\.X-A must be string or array$/],
    [{ headers: { 'Bad Name': 'v' } }, /^headers/],
    [{ attachments: {} }, /^attachments must be array or null$/],
    [{ attachments: [{ filename: 'a.txt', content_type: 'text/plain' }] }, /^attachments\[0\]\.content is required$/],
    [{ attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'not base64!' }] }, /^attachments\[0\]\.content must be base64$/],
    [{ attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'abc' }] }, /^attachments\[0\]\.content must be base64$/],
    [{ attachments: [{ filename: 'a.txt', content_type: 'nonsense', content: 'aGk=' }] }, /^attachments\[0\]\.content_type /],
    [{ attachments: [{ filename: 'a.txt', content_type: 'text/plain', content: 'aGk=', disposition: 'weird' }] }, /^attachments\[0\]\.disposition must be one of/],
    [{ subject: 'bad \ud800 surrogate' }, /^subject is not valid Unicode text$/],
  ];
  for (const [change, reason] of cases) {
    const body: Record<string, unknown> = inboundBody(box.address);
    for (const [k, v] of Object.entries(change)) { if (v === undefined) delete body[k]; else body[k] = v; }
    const r = await postInbound(app, box.key, body);
    t.is(r.status, 422, JSON.stringify(change).slice(0, 80));
    t.regex(r.body.reason ?? '', reason, JSON.stringify(change).slice(0, 80));
  }
  t.is((await app.get('/v1/emails', box.key)).body.data.length, 0);
  const queued = await app.app.db.selectFrom('inbound').select('id').execute();
  t.is(queued.length, 0);
});

test('bodies that are not JSON, not UTF-8 or too large are refused and the server keeps serving', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const auth = { authorization: `Bearer ${box.key}` };
  const notJson = await app.request('POST', '/v1/mail/inbound', { raw: '{"message_id": ', headers: { ...auth, 'content-type': 'application/json' } });
  t.is(notJson.status, 422);
  t.is(notJson.body.reason, 'Malformed JSON body');
  const text = await app.request('POST', '/v1/mail/inbound', { raw: 'hello', headers: { ...auth, 'content-type': 'text/plain' } });
  t.is(text.status, 415);
  const badUtf8 = Buffer.concat([Buffer.from('{"message_id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  const bad = await app.request('POST', '/v1/mail/inbound', { raw: badUtf8, headers: { ...auth, 'content-type': 'application/json' } });
  t.is(bad.status, 422);
  t.is(bad.body.reason, 'Request body is not valid UTF-8');
  const array = await app.post('/v1/mail/inbound', box.key, [inboundBody(box.address)]);
  t.is(array.status, 422);
  // 26 MB of attachments in a body under the 35 MB limit.
  const big = Buffer.alloc(13 * 1024 * 1024, 7).toString('base64');
  const tooMany = await postInbound(app, box.key, inboundBody(box.address, {
    attachments: [{ filename: 'a.bin', content_type: 'application/octet-stream', content: big }, { filename: 'b.bin', content_type: 'application/octet-stream', content: big }],
  }));
  t.is(tooMany.status, 422);
  t.is(tooMany.body.reason, 'attachments exceed 25 MB in total');
  const huge = await postInbound(app, box.key, inboundBody(box.address, { body_text: 'x'.repeat(36 * 1024 * 1024) }));
  t.is(huge.status, 413);
  t.is((await app.get('/v1/emails', box.key)).status, 200);
  await deliver(app, box.key, box.address);
  t.is((await app.app.db.selectFrom('inbound').select('id').execute()).length + (await app.app.db.selectFrom('emails').select('id').execute()).length, 1);
});

test('null optional fields mean absent, and a comma list of cc is split', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const id = await deliver(app, box.key, box.address, { from_name: null, cc: null, bcc: '', body_text: null, body_html: null, headers: null, attachments: null });
  const got = await waitForMessage(app, box.key, id);
  t.is(got.from_name, null);
  t.deepEqual(got.cc, []);
  t.deepEqual(got.bcc, []);
  t.is(got.body_text, null);
  t.is(got.snippet, '');
});

test('storage is asynchronous: an accepted message is durably queued at once and visible once the worker stored it', async (t) => {
  const app = await startTestApp(t);
  const box = await makeInbox(app);
  const bodies = Array.from({ length: 40 }, () => inboundBody(box.address));
  const answers = await Promise.all(bodies.map((b) => postInbound(app, box.key, b)));
  t.true(answers.every((r) => r.status === 200));
  // Right after the answers, each message is either still queued or already stored: never missing.
  const queued = await app.app.db.selectFrom('inbound').select('message').where('status', '=', 'queued').execute();
  const stored = await app.app.db.selectFrom('emails').select('message_id').execute();
  const known = new Set([...queued.map((q) => JSON.parse(q.message).messageId), ...stored.map((s) => s.message_id)]);
  t.true(bodies.every((b) => known.has(b.message_id)));
  const all = await waitForEmails(app, box.key, 40);
  t.is(all.length, 40);
  t.is((await app.app.db.selectFrom('inbound').select('id').execute()).length, 0, 'stored API mail leaves no queue row behind');
  t.is((await app.app.db.selectFrom('inbound_reservations').select('inbound_id').execute()).length, 0);
});
