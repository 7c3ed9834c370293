import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { installAcme, type AcmeTestOptions } from './acme/index.js';
import { installAutoconfig } from './autoconfig/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { Core } from './core.js';
import { loadInstallSecret } from './install-secret.js';
import { createCron } from './cron.js';
import { openConfiguredDatabase } from './db/open.js';
import { runAlone } from './db/pg-session.js';
import { installDns } from './dns/index.js';
import { DNS_CHECK_SLOTS, DNS_LANE } from './dns/tasks.js';
import { installDomains } from './domains/index.js';
import { installMailboxes } from './mailboxes/index.js';
import { installAliases } from './aliases/index.js';
import { installEmails } from './emails/index.js';
import { installLegacy } from './legacy/index.js';
import { installImap } from './imap/index.js';
import { installExport } from './export/index.js';
import { installImport } from './import/index.js';
import { answerClientError } from './http/client-error.js';
import { createRouteRegistry } from './http/registry.js';
import { createHttpApp } from './http/server.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { installSieveStore } from './sieve-store/index.js';
import { installManageSieve } from './managesieve/index.js';
import { installSmtp } from './smtp/index.js';
import { createSpamPolicy } from './spam/policy/index.js';
import { allowedSender } from './spam/lists.js';
import { installSubmission } from './submission/index.js';
import { taskCronJobs } from './tasks/cron.js';
import { postgresClaims } from './tasks/postgres/claims.js';
import { sqliteClaims } from './tasks/sqlite/claims.js';
import { createTaskQueue } from './tasks/queue.js';
import { createTenantService } from './tenants/service.js';
import { createTenantStore } from './tenants/store.js';
import { createCertificateSource } from './tls/index.js';
import { registerCertificateMetrics } from './tls/metrics.js';
import { installTaskSetAside } from './tasks/set-aside.js';
import { installWebhooks } from './webhooks/index.js';
import { createSrsBounces, installOutbound, type OutboundTesting } from './outbound/index.js';
import { installSpam } from './spam/index.js';
import { createSpamTraining } from './spam/training.js';
import { createRspamdTrainer } from './spam/policy/rspamd.js';
import { rspamdSpamTrainer } from './spam/policy/rspamd-training.js';
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
  /** Test-only knobs of outbound delivery (MTA-STS port and CA, short timeouts); never set in production. */
  outboundTesting?: OutboundTesting;
  /** Test-only ACME knobs: the directory's CA (Pebble's), a clock, a faster policy. */
  acme?: AcmeTestOptions;
}

/**
 * The composition root: opens the database, builds every capability once, and returns the running
 * parts with `start` (listen, work, tick) and `stop` (graceful, in dependency order).
 */
/** How long an HTTP connection may send and receive nothing before it is closed. */
const UPLOAD_IDLE_MS = 120_000;

export async function createApp({ config, clock = systemClock, logger = createLogger(config.logLevel), parserThreads, outboundTesting, acme: acmeTest }: AppOptions) {
  // A bare OS hostname ("vm") ends up in the MX plan, the certificate and every bounce's sender.
  if (!config.hostname.includes('.')) {
    logger.warn({ variable: 'MAILSTEAD_HOSTNAME', hostname: config.hostname },
      `MAILSTEAD_HOSTNAME is "${config.hostname}", a name without a dot: MX records (MAILSTEAD_MX_HOSTS defaults to mx1/mx2 under it), the TLS certificate and bounces (MAILER-DAEMON@${config.hostname}) all carry it; set MAILSTEAD_HOSTNAME to the fully qualified name this server is reached by`);
  }
  // The one certificate of every TLS listener (SMTP STARTTLS, IMAP, submission); SIGHUP reloads it.
  // First, so unusable certificate files stop the start before anything is opened.
  const tls = await createCertificateSource({ config, logger });
  // ACME's stored certificate replaces the self-signed one here, before any listener opens.
  const acme = await installAcme({ config, logger, clock, tls, test: acmeTest });
  // The server's writers never checkpoint inside a commit (an SMTP 250 would wait for it): a thread does.
  // SQLite in the data dir, or PostgreSQL when MAILSTEAD_DATABASE_URL is set (DECISIONS.md section 17).
  const database = await openConfiguredDatabase(config, {
    checkpoints: 'background',
    onCheckpointError: (err) => logger.warn({ err }, 'WAL checkpoint failed; retrying'),
    onIdleError: (err) => logger.warn({ err }, 'an idle PostgreSQL connection failed; the pool replaces it'),
    onQueryError: (err, sql) => logger.debug({ err, sql }, 'PostgreSQL query failed'),
  });
  const db = database.db;
  const installSecret = await loadInstallSecret(database, config.dataDir, logger);
  const claims = database.dialect === 'postgres' ? postgresClaims(db, database.session) : sqliteClaims(db);
  const queue = createTaskQueue({ db, clock, logger, lanes: { [DNS_LANE]: DNS_CHECK_SLOTS }, claims });
  // With many nodes on PostgreSQL, each cron tick's work is done by one of them.
  const cron = database.dialect === 'postgres' ? createCron(logger, (name, run) => runAlone(database.session, name, run)) : createCron(logger);
  for (const job of taskCronJobs(queue)) cron.add(job);
  const tenants = createTenantService({
    db, backend: database.backend, store: createTenantStore(), clock, cooldownSeconds: config.cooldownSeconds, directoryVersion: database.directoryVersion,
  });
  const registry = createRouteRegistry({ tenants, config, clock, durable: database.durable });
  const metrics = createMetrics();
  registerCertificateMetrics(metrics.registry, tls, acmeTest?.clock ?? clock);
  installTaskSetAside({ db, now: () => clock.now(), queue, routes: registry, metrics: metrics.registry });
  const core: Core = { config, clock, logger, db, backend: database.backend, session: database.dialect === 'postgres' ? database.session : null, queue, cron, registry, tenants, metrics, durable: database.durable, directoryVersion: database.directoryVersion, changes: database.directoryVersion, installSecret };

  // Capabilities, in dependency order; each install returns what later ones build on.
  const domains = installDomains(core);
  const mailboxes = installMailboxes(core, { domains });
  const aliases = installAliases(core, { mailboxes });
  const sieve = installSieveStore(core, { mailboxes });      // Sieve scripts and vacation (DECISIONS.md section 19)
  installLegacy(core, { domains, mailboxes, aliases });       // variant B: another face of the three above
  const webhooks = installWebhooks(core);                    // -> webhooks.events (EventRecorder)
  // SRS bounces to forwarded mail resolve at RCPT like any recipient, so both inbound paths get this resolver.
  const bounces = createSrsBounces(core, aliases.resolve);
  const emails = installEmails(core, { resolve: bounces.resolve, events: webhooks.events, mailboxes, parserThreads }); // -> emails.ingest (Ingest)
  // Before the 250 (section 18): a DMARC reject is waived for senders on a recipient tenant's allow list.
  const spamPolicy = createSpamPolicy({ config, logger, registry: metrics.registry, allowedSender: (tenantIds, from) => allowedSender(db, tenantIds, from) });
  const smtp = installSmtp(core, { resolve: bounces.resolve, ingest: emails.ingest, tls, policy: spamPolicy });
  const outbound = installOutbound(core, { srs: bounces.srs, ingest: emails.ingest, resolve: bounces.resolve, testing: outboundTesting });
  const dns = installDns(core, { domains });
  // The spam filter learns from what users do over IMAP and the API (src/spam/training.ts).
  const training = createSpamTraining({ clock, logger });
  if (config.spamFilter === 'rspamd') training.add(rspamdSpamTrainer(createRspamdTrainer(config), (tenantId, id) => emails.files.rawBytes(tenantId, id)));
  const imap = installImap(core, { emails, tls, training });
  const spam = installSpam(core, { emails, messages: imap.messages, training, mailboxes });
  const submission = installSubmission(core, { resolve: bounces.resolve, emails, folders: imap.messages, outbound, tls });
  const managesieve = installManageSieve(core, { tls, scripts: sieve.scripts }); // RFC 5804 (DECISIONS.md section 19)
  const imports = installImport(core, { messages: imap.messages }); // import and export (DECISIONS.md section 20)
  installExport(core, { emails, messages: imap.messages });
  const autoconfig = installAutoconfig(core, { domains });

  const lifecycle = { draining: false };
  const http = createHttpApp({ registry, logger, publicUrl: config.publicUrl, metrics, lifecycle, wellKnown: [acme.challenges.middleware, autoconfig.middleware] });
  http.use(dashboard());                                     // GET / and its files; after the API routes
  let server: Server | null = null;

  return {
    ...core,
    /** The raw SQLite handle (backups, tests); there is none on PostgreSQL. */
    get sqlite() {
      if (database.dialect !== 'sqlite') throw new Error('there is no SQLite handle: the stores are on PostgreSQL (MAILSTEAD_DATABASE_URL)');
      return database.sqlite;
    },
    domains,
    dns,
    mailboxes,
    aliases,
    webhooks,
    emails,
    smtp,
    outbound,
    tls,
    imap,
    acme,
    submission,
    spam,
    sieve,

    /** Starts the worker, the listeners and cron; resolves with the real ports. */
    async start(): Promise<{ httpPort: number; smtpPort: number; imapPort: number | null; imapStarttlsPort: number | null; submissionPort: number | null; submissionsPort: number | null; managesievePort: number | null }> {
      await queue.start();
      await webhooks.start();
      await emails.start();
      server = await new Promise<Server>((resolve, reject) => {
        const s = http.listen(config.httpPort, config.httpHost, () => resolve(s));
        s.once('error', reject);
      });
      server.keepAliveTimeout = 65_000;
      // Mail uploads (import, DECISIONS.md section 20) stream up to 10 GB, which Node's default cap on a
      // whole request (300 s) would cut off: the cap goes, and a connection that sends nothing for 2
      // minutes is closed instead. Headers still must arrive within headersTimeout (60 s), and every
      // JSON body has its size limit, so a slow client cannot hold a request open cheaply.
      server.requestTimeout = 0;
      server.setTimeout(UPLOAD_IDLE_MS);
      server.on('clientError', answerClientError);
      const httpPort = (server.address() as AddressInfo).port;
      const smtpPort = await smtp.listen();
      const { imapPort, imapStarttlsPort } = await imap.listen();
      const { submissionPort, submissionsPort } = await submission.listen();
      const managesievePort = await managesieve.listen();
      outbound.start();
      cron.start();
      acme.start(); // the CA validates HTTP-01 through the listener opened above
      return { httpPort, smtpPort, imapPort, imapStarttlsPort, submissionPort, submissionsPort, managesievePort };
    },

    /** Stops accepting, lets in-flight HTTP requests, SMTP sessions and tasks finish, closes the database. */
    async stop(): Promise<void> {
      await acme.stop();
      await cron.stop();
      lifecycle.draining = true;
      imports.stop();                                        // running imports are queued again and resume at the next start
      const httpClosed = server ? closeHttp(server) : Promise.resolve();
      await Promise.all([httpClosed, smtp.close(), imap.close(), submission.close(), managesieve.close(), webhooks.stop(), outbound.stop()]);
      await emails.stop();                                  // the ingest worker, then the parser threads
      await queue.stop();
      tls.close();
      await database.close();
    },
  };
}
export type App = Awaited<ReturnType<typeof createApp>>;
