import { pino, type Logger } from 'pino';

export type { Logger };

let stdout: ReturnType<typeof pino.destination> | null = null;

/**
 * Standard output for every logger of the process, written asynchronously: under load, lines that
 * arrive while a write is under way go out together in the next one instead of one system call per
 * line on the thread that answers requests. Whatever is pending is written at exit.
 */
function sharedStdout() {
  if (!stdout) {
    const dest = pino.destination({ dest: 1, sync: false });
    process.once('exit', () => {
      try { dest.flushSync(); } catch { /* stdout already gone */ }
    });
    stdout = dest;
  }
  return stdout;
}

/**
 * The process logger: pino JSON lines on stdout (or `destination`, where tests read what was
 * logged). Secrets are redacted by path as a second line of defence.
 */
export function createLogger(level: string, destination: pino.DestinationStream = sharedStdout()): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['key', 'apiKey', 'password', 'secret', 'token', '*.password', '*.secret', '*.token', 'req.headers.authorization', 'req.headers["x-api-key"]'],
      censor: '[redacted]',
    },
  }, destination);
}
