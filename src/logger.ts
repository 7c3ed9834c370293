import { pino, type Logger } from 'pino';

export type { Logger };

/** The process logger: pino JSON lines on stdout. Secrets are redacted by path as a second line of defence. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['key', 'apiKey', 'password', 'secret', 'token', '*.password', '*.secret', '*.token', 'req.headers.authorization', 'req.headers["x-api-key"]'],
      censor: '[redacted]',
    },
  });
}
