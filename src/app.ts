import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { Core } from './core.js';
import { createCron } from './cron.js';
import { openDatabase } from './db/connection.js';
import { installDomains } from './domains/index.js';
import { createRouteRegistry } from './http/registry.js';
import { createHttpApp } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { createSmtpListener } from './smtp/server.js';
import { createTaskQueue } from './tasks/queue.js';
import { createTenantService } from './tenants/service.js';
import { createTenantStore } from './tenants/store.js';

/** Options of createApp; tests pass a temporary data dir in `config` and may inject a clock. */
export interface AppOptions {
  config: Readonly<Config>;
  clock?: Clock;
  logger?: Logger;
}

/**
 * The composition root: opens the database, builds every capability once, and returns the running
 * parts with `start` (listen, work, tick) and `stop` (graceful, in dependency order).
 */
export async function createApp({ config, clock = systemClock, logger = createLogger(config.logLevel) }: AppOptions) {
  const database = await openDatabase(config.dataDir);
  const db = database.db;
  const queue = createTaskQueue({ db, clock, logger });
  const cron = createCron(logger);
  const tenants = createTenantService({ db, store: createTenantStore(), clock, cooldownSeconds: config.cooldownSeconds });
  const registry = createRouteRegistry({ tenants, config, clock });
  const core: Core = { config, clock, logger, db, queue, cron, registry, tenants };

  // Capabilities, in dependency order; each install returns what later ones build on.
  const domains = installDomains(core);
  // mailboxes: installMailboxes(core, { domains })            -> mailboxes
  // aliases:   installAliases(core, { mailboxes })            -> aliases.resolve (RecipientResolver)
  // webhooks:  installWebhooks(core)                          -> webhooks.events (EventRecorder)
  // emails:    installEmails(core, { resolve, events, ... })  -> emails.ingest (Ingest)
  // smtp:      installSmtp(core, { resolve, ingest })         -> replaces the closed-door listener below
  // dns:       installDns(core, { domains })

  const http = createHttpApp({ registry, logger, publicUrl: config.publicUrl });
  const smtp = createSmtpListener({ config, logger });
  let server: Server | null = null;

  return {
    ...core,
    sqlite: database.sqlite,
    domains,

    /** Starts the worker, the listeners and cron; resolves with the real ports. */
    async start(): Promise<{ httpPort: number; smtpPort: number }> {
      await queue.start();
      server = await new Promise<Server>((resolve, reject) => {
        const s = http.listen(config.httpPort, config.httpHost, () => resolve(s));
        s.once('error', reject);
      });
      server.keepAliveTimeout = 65_000;
      const httpPort = (server.address() as AddressInfo).port;
      const smtpPort = await smtp.listen();
      cron.start();
      return { httpPort, smtpPort };
    },

    /** Stops accepting, lets in-flight HTTP requests, SMTP sessions and tasks finish, closes the database. */
    async stop(): Promise<void> {
      await cron.stop();
      const httpClosed = server
        ? new Promise<void>((resolve) => { server!.close(() => resolve()); server!.closeIdleConnections(); })
        : Promise.resolve();
      await Promise.all([httpClosed, smtp.close()]);
      await queue.stop();
      await database.close();
    },
  };
}
export type App = Awaited<ReturnType<typeof createApp>>;
