import { sql } from 'kysely';
import type { Db, Trx } from './connection.js';
import { backendOf } from './backend.js';

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
  return backendOf(db).choose({ sqlite: alone, postgres: underProvisioningLock })(db, fn);
}

const alone = <T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> => db.transaction().execute(fn);

const underProvisioningLock = <T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> =>
  db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${PROVISIONING_LOCK})`.execute(trx);
    return fn(trx);
  });
