import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { NodeSession } from '../../db/pg-session.js';
import type { TaskClaims } from '../ports.js';
import { createTaskStore, type TaskRow } from '../store.js';

/** The NOTIFY channel that wakes every node's task queue. */
export const TASKS_CHANNEL = 'mailstead_tasks';
/** The first key of the advisory locks that mark a task as running on a live node. */
const LOCK_CLASS = 0x7461736b; // 'task'

/**
 * PostgreSQL, any number of nodes: a claim skips rows another node is claiming (FOR UPDATE SKIP
 * LOCKED) and, in the same statement, takes a session advisory lock on the task id on this node's
 * own connection. The lock lives as long as the node: a `running` task whose lock anyone can take
 * was left by a node that died, and is queued again. Enqueues NOTIFY, which PostgreSQL delivers at
 * commit, so no node claims before the row is visible.
 */
export function postgresClaims(db: Db, session: NodeSession): TaskClaims {
  /** Tasks this node runs: its own session may take their locks again, so recovery skips them. */
  const mine = new Set<number>();
  const lockKey = (id: number) => id % 2_147_483_647; // the two-key form takes int4 keys
  return {
    async afterEnqueue(trx) {
      await sql`SELECT pg_notify(${TASKS_CHANNEL}, '')`.execute(trx);
    },
    listen: (wake) => session.listen(TASKS_CHANNEL, wake),
    async claimNext(now, kinds) {
      const { rows } = await session.query<TaskRow>(`
        WITH next AS (
          SELECT id FROM tasks WHERE status = 'queued' AND run_after <= $1 AND kind = ANY($2::text[])
          ORDER BY run_after, id LIMIT 1 FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE tasks SET status = 'running', started_at = $1, attempts = attempts + 1
          FROM next WHERE tasks.id = next.id RETURNING tasks.*
        )
        SELECT claimed.*, pg_advisory_lock($3, (claimed.id % 2147483647)::int4) IS NULL AS unused FROM claimed`, [now, kinds, LOCK_CLASS]);
      const row = rows[0];
      if (!row) return undefined;
      delete (row as { unused?: boolean }).unused;
      mine.add(row.id);
      return row;
    },
    async release(id) {
      mine.delete(id);
      await session.query('SELECT pg_advisory_unlock($1, $2::int4)', [LOCK_CLASS, lockKey(id)]);
    },
    async recover() {
      const running = await db.selectFrom('tasks').select('id').where('status', '=', 'running').execute();
      let n = 0;
      for (const { id } of running) {
        if (mine.has(id)) continue;
        const { rows } = await session.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1, $2::int4) AS free', [LOCK_CLASS, lockKey(id)]);
        if (!rows[0]!.free) continue; // a live node runs it
        try {
          const r = await db.updateTable('tasks').set({ status: 'queued' }).where('id', '=', id).where('status', '=', 'running').executeTakeFirst();
          n += Number(r.numUpdatedRows);
        } finally {
          await session.query('SELECT pg_advisory_unlock($1, $2::int4)', [LOCK_CLASS, lockKey(id)]);
        }
      }
      return n;
    },
  };
}
