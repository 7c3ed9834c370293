import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';

const SHUTDOWN_DEADLINE_MS = 9_500;

/** Loads the configuration, starts the appliance, stops it gracefully on SIGTERM or SIGINT and reloads TLS on SIGHUP. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mailstead: configuration error: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const app = await createApp({ config, logger });
  const { httpPort, smtpPort, imapPort, imapStarttlsPort, submissionPort, submissionsPort, managesievePort } = await app.start();
  logger.info({ http_port: httpPort, host: config.httpHost }, 'http listening');
  logger.info({ smtp_port: smtpPort, host: config.smtpHost }, 'smtp listening');
  if (imapPort !== null) logger.info({ imap_port: imapPort, host: config.smtpHost }, 'imap listening');
  if (imapStarttlsPort !== null) logger.info({ imap_starttls_port: imapStarttlsPort, host: config.smtpHost }, 'imap starttls listening');
  if (submissionPort !== null) logger.info({ submission_port: submissionPort, host: config.smtpHost }, 'submission listening');
  if (submissionsPort !== null) logger.info({ submissions_port: submissionsPort, host: config.smtpHost }, 'submissions listening');
  if (managesievePort !== null) logger.info({ managesieve_port: managesievePort, host: config.smtpHost }, 'managesieve listening');

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown deadline passed, exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    app.stop().then(
      () => { logger.info('stopped'); process.exit(0); },
      (err) => { logger.error({ err }, 'shutdown failed'); process.exit(1); },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // SIGHUP: re-read MAILSTEAD_TLS_CERT/KEY (after a renewal) for every TLS listener without dropping
  // sessions; a failure is logged by the source, which keeps the previous pair.
  process.on('SIGHUP', () => { app.tls.reloadFiles().catch(() => undefined); });
}

main().catch((err) => {
  process.stderr.write(`mailstead: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
