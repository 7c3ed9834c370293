import { backendOf } from '../db/backend.js';
import type { Db } from '../db/connection.js';
import type { InboundSql, StorageSql } from './ports.js';
import { postgresInboundSql } from './postgres/inbound-sql.js';
import { postgresStorageSql } from './postgres/storage-sql.js';
import { sqliteInboundSql } from './sqlite/inbound-sql.js';
import { sqliteStorageSql } from './sqlite/storage-sql.js';

/** Mail storage's statements for the backend `db` was opened on (ports.ts). */
export const storageSql = (db: Db): StorageSql => backendOf(db).choose({ sqlite: sqliteStorageSql, postgres: postgresStorageSql });

/** The inbound queue's statements for the backend `db` was opened on (ports.ts). */
export const inboundSql = (db: Db): InboundSql => backendOf(db).choose({ sqlite: sqliteInboundSql, postgres: postgresInboundSql });
