import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import type { TasksTable } from '../db/types.js';
import type { Task } from './types.js';

/** A task as stored. */
export type TaskRow = Omit<TasksTable, 'id' | 'attempts'> & { id: number; attempts: number };
type Row = TaskRow;

/** A stored row as a Task. */
export function toTask(row: Row): Task {
  return {
    id: row.id,
    kind: row.kind,
    tenantId: row.tenant_id,
    keyId: row.key_id,
    domain: row.domain,
    status: row.status,
    payload: JSON.parse(row.payload),
    results: row.result === null ? null : JSON.parse(row.result),
    totalEmail: row.total_email,
    error: row.error,
    attempts: row.attempts,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

/** Every query of the task queue. */
export function createTaskStore() {
  return {
    insert: (db: Db, t: { kind: string; tenant_id: number | null; key_id: number | null; domain: string; payload: string; run_after: number; created_at: number }) =>
      db.insertInto('tasks').values({ ...t, status: 'queued', total_email: 0 }).returning('id').executeTakeFirstOrThrow().then((r) => r.id),

    /** Atomically takes the next due task of a known kind and marks it running. */
    claimNext: (db: Db, now: number, kinds: string[]) =>
      db.updateTable('tasks')
        .set({ status: 'running', started_at: now, attempts: sql`attempts + 1` })
        .where('id', '=', (eb) => eb.selectFrom('tasks').select('id')
          .where('status', '=', 'queued').where('run_after', '<=', now).where('kind', 'in', kinds)
          .orderBy('run_after').orderBy('id').limit(1))
        .returningAll().executeTakeFirst() as Promise<Row | undefined>,

    complete: (db: Db, id: number, now: number, totalEmail: number, result: string) =>
      db.updateTable('tasks').set({ status: 'completed', finished_at: now, total_email: totalEmail, result, error: null })
        .where('id', '=', id).execute(),

    fail: (db: Db, id: number, now: number, error: string) =>
      db.updateTable('tasks').set({ status: 'failed', finished_at: now, error }).where('id', '=', id).execute(),

    requeue: (db: Db, id: number, runAfter: number) =>
      db.updateTable('tasks').set({ status: 'queued', run_after: runAfter }).where('id', '=', id).execute(),

    /** Deletes finished system tasks (no key: cron-made, nobody polls them) that ended before `before`. */
    pruneSystem: (db: Db, before: number) =>
      db.deleteFrom('tasks').where('key_id', 'is', null).where('status', 'in', ['completed', 'failed'])
        .where('finished_at', '<', before).executeTakeFirst().then((r) => Number(r.numDeletedRows)),

    /** Puts back every task a crash left running; returns how many. */
    recoverRunning: (db: Db) =>
      db.updateTable('tasks').set({ status: 'queued' }).where('status', '=', 'running').executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows)),

    nextRunAfter: (db: Db, kinds: string[]) =>
      db.selectFrom('tasks').select((eb) => eb.fn.min('run_after').as('t'))
        .where('status', '=', 'queued').where('kind', 'in', kinds).executeTakeFirst().then((r) => (r?.t ?? null) as number | null),

    /** How many tasks failed with this exact error. */
    countFailedWith: (db: Db, error: string) =>
      db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'failed').where('error', '=', error)
        .executeTakeFirstOrThrow().then((r) => Number(r.n)),

    /** Failed tasks of this exact error (those set aside), oldest first; only the one of `id` when given. */
    failedWith: (db: Db, error: string, o: { limit: number; id?: number }) =>
      db.selectFrom('tasks').select(['id', 'kind', 'tenant_id', 'domain', 'attempts', 'error', 'created_at', 'finished_at'])
        .where('status', '=', 'failed').where('error', '=', error)
        .$if(o.id !== undefined, (q) => q.where('id', '=', o.id!)).orderBy('id').limit(o.limit).execute(),

    /** Queues a task that failed with this exact error again, due now; false when there is none of that id. */
    requeueFailedWith: (db: Db, id: number, error: string, now: number) =>
      db.updateTable('tasks').set({ status: 'queued', run_after: now, error: null, finished_at: null })
        .where('id', '=', id).where('status', '=', 'failed').where('error', '=', error).executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) > 0),

    /** Deletes a task that failed with this exact error; false when there is none of that id. */
    removeFailedWith: (db: Db, id: number, error: string) =>
      db.deleteFrom('tasks').where('id', '=', id).where('status', '=', 'failed').where('error', '=', error).executeTakeFirst()
        .then((r) => Number(r.numDeletedRows) > 0),

    byId: (db: Db, id: number) =>
      db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst() as Promise<Row | undefined>,
  };
}
export type TaskStore = ReturnType<typeof createTaskStore>;
