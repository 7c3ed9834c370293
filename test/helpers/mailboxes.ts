import type { TestClient, Reply } from './app.js';

/** How long these helpers and the tests using them wait for a task: generous, as the test machine is shared and busy. */
export const TASK_WAIT_MS = 30_000;

/** Creates a root domain and waits for its task; returns the hostname. */
export const domain = (app: TestClient, key: string, hostname: string, params?: Record<string, unknown>): Promise<string> =>
  app.domain(key, hostname, params);

/** Creates one mailbox through the API and waits for its task; returns the completed poll. */
export async function createMailbox(app: TestClient, key: string, domain: string, address: string, password: string | number = 0, fullname = 'Test User'): Promise<Reply> {
  const r = await app.post('/v1/create/mailbox/single', key, { Email_fullname: fullname, single_bulk: 'single', Domain: domain, Params: { email_id: address, password } });
  if (r.status !== 200) throw new Error(`create mailbox ${address}: ${r.status} ${JSON.stringify(r.body)}`);
  return app.pollTask('/v1/get/mailbox/single', key, r.body.task_id, TASK_WAIT_MS);
}

/** Creates mailboxes in bulk through the API and waits for the task; returns the completed poll. */
export async function bulkMailboxes(app: TestClient, key: string, domain: string, fullname: string, count: number, password: string | number = 0): Promise<Reply> {
  const r = await app.post('/v1/create/mailbox/bulk', key, { Email_fullname: fullname, single_bulk: 'bulk', Domain: domain, Params: { mailbox_no: count, password } });
  if (r.status !== 200) throw new Error(`bulk mailboxes on ${domain}: ${r.status} ${JSON.stringify(r.body)}`);
  return app.pollTask('/v1/get/mailbox/bulk', key, r.body.task_id, TASK_WAIT_MS);
}

/** The tenant and key ids behind a key (for tests that enqueue or inspect rows directly). */
export async function whoIs(app: TestClient, key: string): Promise<{ tenantId: number; keyId: number }> {
  const k = await app.app.tenants.authenticate(key);
  if (!k) throw new Error('unknown key');
  return { tenantId: k.tenantId, keyId: k.id };
}

/** The stored mailbox row of an address, or undefined. */
export const mailboxRow = (app: TestClient, address: string) =>
  app.app.db.selectFrom('mailboxes').selectAll().where('address', '=', address).executeTakeFirst();

/** Creates an alias through the API and waits for its task; returns the final poll. */
export async function createAlias(app: TestClient, key: string, domain: string, params: Record<string, unknown>): Promise<Reply> {
  const r = await app.post('/v1/create/alias', key, { Domain: domain, Params: params });
  if (r.status !== 200) throw new Error(`create alias on ${domain}: ${r.status} ${JSON.stringify(r.body)}`);
  return app.pollTask('/v1/get/alias', key, r.body.task_id, TASK_WAIT_MS);
}
