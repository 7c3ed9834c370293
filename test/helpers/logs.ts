import { createLogger, type Logger } from '../../src/logger.js';

/**
 * The process logger's own configuration at `level`, writing into memory: `text()` is every line
 * logged so far, `records()` the same lines parsed (pino writes one JSON object a line).
 */
export function capturedLogger(level = 'debug'): { logger: Logger; text: () => string; records: () => Array<Record<string, any>> } {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (line: string) => { lines.push(line); } });
  return { logger, text: () => lines.join(''), records: () => lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}
