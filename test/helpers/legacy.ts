import type { Reply, TestClient } from './app.js';

/** Where variant B lives below the test client's base (/api). */
export const LEGACY = '/legacy/v1';

/** A variant B POST: the key travels as `key` in the JSON body, no header. */
export const legacyPost = (app: TestClient, path: string, key: string | undefined, body: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<Reply> =>
  app.request('POST', LEGACY + path, { body: key === undefined ? body : { key, ...body }, headers });

/** A variant B GET: the key and every other parameter travel in the query, no header. */
export function legacyGet(app: TestClient, path: string, query: Record<string, string | number | undefined>, headers?: Record<string, string>): Promise<Reply> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const qs = params.toString();
  return app.request('GET', LEGACY + path + (qs ? `?${qs}` : ''), { headers });
}

/** Polls a variant B mailbox task until it leaves queued/running (or the poll errors). */
export async function legacyPoll(app: TestClient, path: string, key: string, taskId: number, timeoutMs = 30_000): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await legacyGet(app, path, { key, task_id: taskId });
    if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${r.body.status} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/**
 * How many tasks requests have enqueued (to prove that a refused request enqueued nothing). Tasks
 * without a key are the scheduler's DNS checks, which a cron tick may add at any moment: not counted.
 */
export const taskCount = async (app: TestClient): Promise<number> =>
  Number((await app.app.db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('key_id', 'is not', null).executeTakeFirstOrThrow()).n);

/**
 * Waits until no domain or sub-domain create task is queued or running: variant B's creates answer
 * without a task id, so their outcome is awaited this way before it is read through a list.
 */
export async function settleDomainTasks(app: TestClient, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const busy = await app.app.db.selectFrom('tasks').select('id').where('kind', 'in', ['domain.create', 'subdomain.create'])
      .where('status', 'in', ['queued', 'running']).executeTakeFirst();
    if (!busy) return;
    if (Date.now() > deadline) throw new Error(`tasks still busy after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 20));
  }
}
