import type { ExecutionContext } from 'ava';
import type { TestClient, Reply } from './app.js';
import { createMailbox, mailboxRow } from './mailboxes.js';
import { lastCheck, poll } from './poll.js';

let seq = 0;

/** A tenant with a key, a domain and mailboxes made through the API. */
export interface Inbox {
  key: string;
  tenant: string;
  domain: string;
  /** Address and id of each mailbox, in the order asked for. */
  mailboxes: Array<{ address: string; id: number }>;
  /** The first mailbox's address. */
  address: string;
  /** The first mailbox's id. */
  mailboxId: number;
}

/** Creates a tenant, a key with every permission, a domain and `count` mailboxes (inbox0@, inbox1@, ...). */
export async function makeInbox(app: TestClient, o: { count?: number; domain?: string; perms?: string[] } = {}): Promise<Inbox> {
  const tenant = await app.tenant();
  const key = await app.keyFor({ tenant, perms: o.perms });
  const admin = o.perms ? await app.keyFor({ tenant }) : key;
  const domain = o.domain ?? `mail${process.pid}x${++seq}.example`;
  await app.domain(admin, domain);
  const mailboxes: Inbox['mailboxes'] = [];
  for (let i = 0; i < (o.count ?? 1); i++) {
    const address = `inbox${i}@${domain}`;
    const done = await createMailbox(app, admin, domain, address, 'password-123');
    if (done.body.status !== 'completed') throw new Error(`mailbox task: ${JSON.stringify(done.body)}`);
    const row = await mailboxRow(app, address);
    if (!row) throw new Error(`mailbox ${address} not stored`);
    mailboxes.push({ address, id: row.id });
  }
  return { key, tenant, domain, mailboxes, address: mailboxes[0]?.address ?? '', mailboxId: mailboxes[0]?.id ?? 0 };
}

/** A valid inbound body for `to`, with a unique message_id; fields can be overridden. */
export function inboundBody(to: string, o: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    message_id: `<m${process.pid}.${++seq}@sender.example>`,
    from_email: 'ann@sender.example',
    from_name: 'Ann Sender',
    to_email: to,
    subject: `Hello ${seq}`,
    received_at: new Date(Date.UTC(2024, 0, 1, 12, 0, 0) + seq * 1000).toISOString(),
    body_text: `Body number ${seq}`,
    ...o,
  };
}

/** Posts to /v1/mail/inbound. */
export const postInbound = (app: TestClient, key: string, body: unknown) => app.post('/v1/mail/inbound', key, body);

/** Posts and insists on 200 accepted; returns the message_id. */
export async function deliver(app: TestClient, key: string, to: string, o: Record<string, unknown> = {}): Promise<string> {
  const body = inboundBody(to, o);
  const r = await postInbound(app, key, body);
  if (r.status !== 200) throw new Error(`inbound: ${r.status} ${JSON.stringify(r.body)}`);
  return body.message_id as string;
}

/** Polls GET `path` until `done(reply)` holds (storage is asynchronous); throws after the deadline, showing the last reply. */
export async function pollUntil(app: TestClient, key: string, path: string, done: (r: Reply) => boolean, timeoutMs = 15_000): Promise<Reply> {
  const r = await lastCheck(() => app.get(path, key), { done, timeoutMs, everyMs: 20 });
  if (!done(r)) throw new Error(`GET ${path} not as expected after ${timeoutMs} ms: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  return r;
}

/** Waits until the list (with `query`, such as `unread=true`) holds at least `count` emails; returns them. */
export async function waitForEmails(app: TestClient, key: string, count: number, query = '', timeoutMs = 30_000): Promise<any[]> {
  const q = query.replace(/^&/, '');
  const r = await pollUntil(app, key, `/v1/emails?per_page=100${q ? '&' + q : ''}`, (x) => x.status === 200 && x.body.data.length >= count, timeoutMs);
  return r.body.data;
}

/** Finds a stored email by message_id through the list (waiting for the worker); returns its list item. */
export async function waitForMessage(app: TestClient, key: string, messageId: string): Promise<any> {
  return poll(`${messageId} stored`, () => findMessage(app, key, messageId), { timeoutMs: 15_000, everyMs: 20 });
}

/** Every list item of the tenant, following next cursors (bounded). */
export async function listAll(app: TestClient, key: string, query = '', perPage = 100): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const c: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const q = query.replace(/^&/, '');
    const r = await app.get(`/v1/emails?per_page=${perPage}${q ? '&' + q : ''}${c}`, key);
    if (r.status !== 200) throw new Error(`list: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.data);
    cursor = r.body.meta.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('list did not end');
}

async function findMessage(app: TestClient, key: string, messageId: string): Promise<any> {
  for (const item of await listAll(app, key)) {
    const full = await app.get(`/v1/emails/${item.id}`, key);
    if (full.status === 200 && full.body.data.message_id === messageId) return full.body.data;
  }
  return undefined;
}

/** A search as the tests compare it: the subjects of the first page for `q`, sorted and joined (asserts 200). */
export function searchSubjects(t: ExecutionContext, app: TestClient, key: string) {
  return async (q: string): Promise<string> => {
    const r = await app.get(`/v1/emails?q=${encodeURIComponent(q)}`, key);
    t.is(r.status, 200, q);
    return r.body.data.map((e: any) => e.subject).sort().join(',');
  };
}
