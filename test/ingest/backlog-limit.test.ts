import test from 'ava';
import { makeInbox, inboundBody, listAll, postInbound } from '../helpers/emails.js';
import { startTestApp, type TestClient } from '../helpers/app.js';
import { sendOn, smtpClient } from '../helpers/smtp.js';
import { lastCheck } from '../helpers/poll.js';

/*
 * The backlog bounded in time (issue 47): with MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS far below what
 * storage falls behind by while mail arrives (storage yields to arriving mail, pace.ts), senders
 * that outrun storage get 451 4.3.1 (SMTP) or 503 with Retry-After (API) instead of an
 * acknowledgement; everything acknowledged is stored, and acceptance resumes once it is.
 */

/** 20 ms of storage work: a few dozen messages at the measured storage rate. */
const LIMIT_ENV = { MAILSTEAD_INGEST_MAX_BACKLOG_SECONDS: '0.02' };
/** The most messages a test sends before it must have seen a refusal. */
const MAX_MESSAGES = 4000;
const SENDERS = 8;

/** Waits until the mailbox lists `count` messages (the backlog drained). */
async function waitUntilListed(app: TestClient, key: string, count: number): Promise<number> {
  return lastCheck(async () => (await listAll(app, key)).length, { timeoutMs: 90_000, everyMs: 100, done: (listed) => listed >= count });
}

test('SMTP answers 451 4.3.1 once the unstored backlog passes its limit in seconds, stores all it acknowledged, and accepts again after', async (t) => {
  t.timeout(180_000);
  const app = await startTestApp(t, { env: LIMIT_ENV });
  const inbox = await makeInbox(app);
  const body = 'x'.repeat(5000);
  let sent = 0;
  let accepted = 0;
  const refusals: string[] = [];
  const others: string[] = [];
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    const c = await smtpClient(app.smtpPort);
    try {
      while (refusals.length === 0 && others.length === 0 && sent < MAX_MESSAGES) {
        const n = ++sent;
        try {
          await sendOn(c, { from: 'load@sender.example', to: [inbox.address] }, `Subject: load ${n}\r\nMessage-ID: <load-${n}@sender.example>\r\n\r\n${body}\r\n`);
          accepted++;
        } catch (err) {
          const e = err as { responseCode?: number; response?: string };
          (e.responseCode === 451 ? refusals : others).push(e.response ?? String(err));
        }
      }
    } finally {
      c.close();
    }
  }));
  t.deepEqual(others, [], 'no other failure');
  t.true(refusals.length > 0, `a 451 within ${MAX_MESSAGES} messages (${accepted} acknowledged)`);
  t.regex(refusals[0], /^451 4\.3\.1 /);
  t.true(accepted > 0);
  // Everything acknowledged is stored; nothing refused is.
  t.is(await waitUntilListed(app, inbox.key, accepted), accepted);
  // Drained: mail is acknowledged again.
  const c = await smtpClient(app.smtpPort);
  t.teardown(() => c.close());
  const info = await sendOn(c, { from: 'late@sender.example', to: [inbox.address] }, 'Subject: after\r\n\r\nafter the drain\r\n');
  t.deepEqual(info.accepted, [inbox.address]);
});

test('POST /v1/mail/inbound answers 503 with Retry-After once the unstored backlog passes its limit, stores all it accepted, and accepts again after', async (t) => {
  t.timeout(180_000);
  const app = await startTestApp(t, { env: LIMIT_ENV });
  const inbox = await makeInbox(app);
  const text = 'y'.repeat(5000);
  let sent = 0;
  let accepted = 0;
  const refusals: Array<{ reason: string; retryAfter: string | null }> = [];
  const others: string[] = [];
  await Promise.all(Array.from({ length: SENDERS * 2 }, async () => {
    while (refusals.length === 0 && others.length === 0 && sent < MAX_MESSAGES) {
      sent++;
      const r = await postInbound(app, inbox.key, inboundBody(inbox.address, { body_text: text }));
      if (r.status === 200) accepted++;
      else if (r.status === 503) refusals.push({ reason: r.body.reason, retryAfter: r.headers.get('retry-after') });
      else others.push(`${r.status} ${JSON.stringify(r.body)}`);
    }
  }));
  t.deepEqual(others, [], 'no other failure');
  t.true(refusals.length > 0, `a 503 within ${MAX_MESSAGES} messages (${accepted} accepted)`);
  t.regex(refusals[0].retryAfter ?? '', /^[1-9][0-9]*$/);
  t.regex(refusals[0].reason, /try again later/);
  t.true(accepted > 0);
  t.is(await waitUntilListed(app, inbox.key, accepted), accepted);
  const r = await postInbound(app, inbox.key, inboundBody(inbox.address));
  t.is(r.status, 200);
});
