import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { lockKeys, type NodeSession } from '../../db/pg-session.js';
import type { DeliveryClaims } from '../ports.js';

/** The first key of the advisory locks that mark a delivery as being sent by a live node ('whdl'). */
const LOCK_CLASS = 0x7768646c;

/**
 * PostgreSQL, any number of nodes: a claiming node takes a session advisory lock on each claimed
 * delivery id on its own connection (pg-session.ts), before the claim commits, and drops it once
 * the outcome is committed. PostgreSQL drops the locks of a node that dies with its connection, so
 * a `sending` delivery whose lock can be taken belongs to no live node and goes back to the queue;
 * one under a lock is another node's request under way and is left alone.
 */
export function postgresDeliveryClaims(db: Db, session: NodeSession): DeliveryClaims {
  return {
    async hold(ids) {
      if (ids.length === 0) return;
      // count() makes every row's lock call run; the keys of one node's batch never wait on another node.
      await session.query('SELECT count(pg_advisory_lock($1, k)) FROM unnest($2::int4[]) AS k', [LOCK_CLASS, lockKeys(ids)]);
    },
    async letGo(ids) {
      if (ids.length === 0) return;
      await session.query('SELECT count(pg_advisory_unlock($1, k)) FROM unnest($2::int4[]) AS k', [LOCK_CLASS, lockKeys(ids)]);
    },
    async recover() {
      // One statement on a pooled connection (not this node's session, whose own locks it would
      // take again): a transaction-level try-lock fails on every delivery a live node (this one
      // included) holds, and is released when the statement commits. SKIP LOCKED leaves rows a
      // claim is writing right now.
      const { rows } = await sql<{ id: number }>`
        WITH sending AS MATERIALIZED (
          SELECT id FROM webhook_deliveries WHERE status = 'sending' FOR UPDATE SKIP LOCKED
        ), orphans AS MATERIALIZED (
          SELECT id FROM sending WHERE pg_try_advisory_xact_lock(${LOCK_CLASS}, (id % 2147483647)::int4)
        )
        UPDATE webhook_deliveries AS d SET status = 'queued' FROM orphans WHERE d.id = orphans.id AND d.status = 'sending'
        RETURNING d.id`.execute(db);
      return rows.length;
    },
  };
}
