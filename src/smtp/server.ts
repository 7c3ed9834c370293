import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/**
 * The SMTP listener. Until recipient resolution and ingestion are wired in, it is a closed door:
 * every recipient is refused with 550 5.7.1, so the box is never an open relay.
 */
export function createSmtpListener({ config, logger }: { config: Config; logger: Logger }) {
  const server = new SMTPServer({
    name: config.hostname,
    banner: `${config.hostname} ESMTP Mailstead`,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      const err = new Error('5.7.1 relaying denied') as Error & { responseCode: number };
      err.responseCode = 550;
      callback(err);
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback(new Error('No valid recipients')));
    },
  });
  server.on('error', (err) => logger.warn({ err }, 'smtp error'));

  return {
    /** Listens and resolves with the real port. */
    listen: () => new Promise<number>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(config.smtpPort, config.smtpHost, () => resolve((server.server.address() as AddressInfo).port));
    }),
    /** Stops accepting and lets open sessions finish. */
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
