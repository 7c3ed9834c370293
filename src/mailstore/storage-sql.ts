import { backendOf } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import type { StorageSql } from './ports.js';
import { postgresStorageSql } from './postgres/storage-sql.js';
import { sqliteStorageSql } from './sqlite/storage-sql.js';

/** Mail storage's statements for the backend `db` was opened on (ports.ts). */
export const storageSql = (db: Db): StorageSql => backendOf(db).choose({ sqlite: sqliteStorageSql, postgres: postgresStorageSql });
