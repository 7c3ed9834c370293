import type { Logger } from './logger.js';

/**
 * Starts one listener of a mail face whose default port is privileged (IMAP 993/143, submission
 * 587/465). A process without the right to bind it (not root, no CAP_NET_BIND_SERVICE: the usual
 * `npm start` on a workstation) leaves that face off with a warning naming the variable, instead of
 * stopping HTTP and SMTP with it. Any other failure still stops the start.
 */
export async function listenUnlessPrivileged(face: string, variable: string, port: number, logger: Logger, start: () => Promise<number>): Promise<number | null> {
  try {
    return await start();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES' || port === 0 || port >= 1024) throw err;
    logger.warn({ port, variable }, `${face} is not listening: port ${port} needs root or CAP_NET_BIND_SERVICE; set ${variable} to a port above 1023`);
    return null;
  }
}
