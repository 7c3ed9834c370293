import { sql } from 'kysely';
import type { Db, Trx } from './connection.js';
import { dialectOf } from './dialect.js';

/** The advisory lock key of provisioning transactions ('prov'). */
const PROVISIONING_LOCK = 0x70726f76;

/**
 * A transaction that runs alone among provisioning transactions, on every node. Provisioning
 * checks and then writes (slots left, an address not yet taken or being created by a queued
 * task): on SQLite every write transaction runs alone anyway (BEGIN IMMEDIATE), and on PostgreSQL
 * a transaction-level advisory lock, taken first so it never waits while holding row locks, gives
 * those checks the same footing across nodes. Provisioning is rare; the lock costs it little.
 */
export function serializedTransaction<T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> {
  if (dialectOf(db) === 'sqlite') return db.transaction().execute(fn);
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${PROVISIONING_LOCK})`.execute(trx);
    return fn(trx);
  });
}
