import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Cron } from './cron.js';
import type { Db } from './db/connection.js';
import type { Backend } from './db/backend.js';
import type { NodeSession } from './db/pg-session.js';
import type { RouteRegistry } from './http/registry.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { TaskQueue } from './tasks/queue.js';
import type { TenantService } from './tenants/service.js';

/** What every capability is built from: the shared infrastructure that app.ts creates once. */
export interface Core {
  config: Readonly<Config>;
  clock: Clock;
  logger: Logger;
  db: Db;
  /**
   * The database under `db`, SQLite (the default) or PostgreSQL (MAILSTEAD_DATABASE_URL), decided
   * once in db/open.ts: capabilities choose their implementations from it at install
   * (`backend.choose({ sqlite, postgres })`) and write small SQL differences with `backend.dml`.
   */
  backend: Backend;
  /**
   * This node's own PostgreSQL connection (LISTEN/NOTIFY, session advisory locks that mark work as
   * a live node's: db/pg-session.ts); null on SQLite, where one process does all the work.
   */
  session: NodeSession | null;
  queue: TaskQueue;
  cron: Cron;
  registry: RouteRegistry;
  tenants: TenantService;
  metrics: Metrics;
  /** Resolves once every commit made before the call survives a power cut; await it before acknowledging. */
  durable(): Promise<void>;
  /**
   * The directory's version (db/open.ts): it moves whenever domains, mailboxes, aliases, API keys
   * or tenants' flags may have changed (SQLite: rows changed through `db`, total_changes();
   * PostgreSQL: commits on any node, db/pg-directory.ts). Caches of directory reads key on it.
   * Not to be confused with MailChanges (emails/mail-changes.ts), mail committed to mailboxes.
   */
  directoryVersion(): number;
  /** @deprecated `directoryVersion`. */
  changes(): number;
  /** The install secret (install-secret.ts): attachment links and SRS derive their keys from it. */
  installSecret: Buffer;
}
