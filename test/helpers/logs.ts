import { createLogger, type Logger } from '../../src/logger.js';

/** The process logger's own configuration at `level`, writing into memory: `text()` is every line logged so far. */
export function capturedLogger(level = 'debug'): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (line: string) => { lines.push(line); } });
  return { logger, text: () => lines.join('') };
}
