import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { Core } from './core.js';
import { createCron } from './cron.js';
import { openDatabase } from './db/connection.js';
import { installDns } from './dns/index.js';
import { DNS_CHECK_SLOTS, DNS_LANE } from './dns/tasks.js';
import { installDomains } from './domains/index.js';
import { installMailboxes } from './mailboxes/index.js';
import { installAliases } from './aliases/index.js';
import { installEmails } from './emails/index.js';
import { answerClientError } from './http/client-error.js';
import { createRouteRegistry } from './http/registry.js';
import { createHttpApp } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { installSmtp } from './smtp/index.js';
import { taskCronJobs } from './tasks/cron.js';
import { createTaskQueue } from './tasks/queue.js';
import { createTenantService } from './tenants/service.js';
import { createTenantStore } from './tenants/store.js';
import { installWebhooks } from './webhooks/index.js';
import { dashboard } from './web/index.js';

const HTTP_DRAIN_MS = 8_000;

/**
 * Stops accepting HTTP connections and waits for in-flight requests. Responses sent while draining
 * carry `Connection: close` (see createHttpApp), so keep-alive connections end with their last
 * response; idle ones are closed at once, and whatever is left is cut after a grace period.
 */
function closeHttp(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const deadline = setTimeout(() => server.closeAllConnections(), HTTP_DRAIN_MS);
    server.close(() => { clearTimeout(deadline); resolve(); });
    server.closeIdleConnections();
  });
}

/** Options of createApp; tests pass a temporary data dir in `config` and may inject a clock. */
export interface AppOptions {
  config: Readonly<Config>;
  clock?: Clock;
  logger?: Logger;
  /** Parser threads for SMTP mail (default: smtp/index.ts decides, none when run from the sources). */
  parserThreads?: number;
}

/**
 * The composition root: opens the database, builds every capability once, and returns the running
 * parts with `start` (listen, work, tick) and `stop` (graceful, in dependency order).
 */
export async function createApp({ config, clock = systemClock, logger = createLogger(config.logLevel), parserThreads }: AppOptions) {
  // The server's writers never checkpoint inside a commit (an SMTP 250 would wait for it): a thread does.
  const database = await openDatabase(config.dataDir, {
    checkpoints: 'background',
    onCheckpointError: (err) => logger.warn({ err }, 'WAL checkpoint failed; retrying'),
  });
  const db = database.db;
  const queue = createTaskQueue({ db, clock, logger, lanes: { [DNS_LANE]: DNS_CHECK_SLOTS } });
  const cron = createCron(logger);
  for (const job of taskCronJobs(queue)) cron.add(job);
  const tenants = createTenantService({ db, store: createTenantStore(), clock, cooldownSeconds: config.cooldownSeconds });
  const registry = createRouteRegistry({ tenants, config, clock, durable: database.durable });
  const metrics = createMetrics();
  const core: Core = { config, clock, logger, db, queue, cron, registry, tenants, metrics, durable: database.durable, changes: database.changes };

  // Capabilities, in dependency order; each install returns what later ones build on.
  const domains = installDomains(core);
  const mailboxes = installMailboxes(core, { domains });
  const aliases = installAliases(core, { mailboxes });
  const webhooks = installWebhooks(core);                    // -> webhooks.events (EventRecorder)
  const emails = installEmails(core, { resolve: aliases.resolve, events: webhooks.events, mailboxes }); // -> emails.ingest (Ingest)
  const smtp = installSmtp(core, { resolve: aliases.resolve, ingest: emails.ingest }, { parserThreads });
  const dns = installDns(core, { domains });

  const lifecycle = { draining: false };
  const http = createHttpApp({ registry, logger, publicUrl: config.publicUrl, metrics, lifecycle });
  http.use(dashboard());                                     // GET / and its files; after the API routes
  let server: Server | null = null;

  return {
    ...core,
    sqlite: database.sqlite,
    domains,
    dns,
    mailboxes,
    aliases,
    webhooks,
    emails,
    smtp,

    /** Starts the worker, the listeners and cron; resolves with the real ports. */
    async start(): Promise<{ httpPort: number; smtpPort: number }> {
      await queue.start();
      await webhooks.start();
      await emails.start();
      server = await new Promise<Server>((resolve, reject) => {
        const s = http.listen(config.httpPort, config.httpHost, () => resolve(s));
        s.once('error', reject);
      });
      server.keepAliveTimeout = 65_000;
      server.on('clientError', answerClientError);
      const httpPort = (server.address() as AddressInfo).port;
      const smtpPort = await smtp.listen();
      cron.start();
      return { httpPort, smtpPort };
    },

    /** Stops accepting, lets in-flight HTTP requests, SMTP sessions and tasks finish, closes the database. */
    async stop(): Promise<void> {
      await cron.stop();
      lifecycle.draining = true;
      const httpClosed = server ? closeHttp(server) : Promise.resolve();
      await Promise.all([httpClosed, smtp.close(), webhooks.stop()]);
      await emails.stop();
      await smtp.stopParsers();
      await queue.stop();
      await database.close();
    },
  };
}
export type App = Awaited<ReturnType<typeof createApp>>;
