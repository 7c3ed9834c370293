import { ApiError } from '../errors.js';

/**
 * The bound in time of what ingestion has acknowledged and not yet stored (issue 47): the in-flow
 * delay (pace.ts) slows senders once storage falls a few seconds behind; past this limit, in
 * seconds of storage work at the measured storage rate, new mail is refused for now (SMTP
 * `451 4.3.1`, API `503` with Retry-After) rather than acknowledged and left invisible for minutes.
 * Mail already accepted is never refused: the backlog drains at the storage rate, and acceptance
 * resumes as soon as it is back under the limit.
 */
export interface BacklogLimit {
  /** Seconds to come back after while the backlog is past the limit; null while there is room. */
  full(): number | null;
}

/** Rows waiting and the storage time per row the worker measured (its estimate of the drain). */
export interface BacklogReading {
  messages: number;
  msPerRow: number;
}

export function createBacklogLimit(limitSeconds: number, read: () => BacklogReading): BacklogLimit {
  const limitMs = limitSeconds * 1000;
  return {
    full() {
      const { messages, msPerRow } = read();
      const ms = messages * msPerRow;
      if (!(ms >= limitMs)) return null;
      // Long enough for the excess to drain at the measured rate, at least a second.
      return Math.max(1, Math.ceil((ms - limitMs) / 1000));
    },
  };
}

/** The API's answer while the backlog is past its limit (DECISIONS.md's convention for "try later": 503 with Retry-After). */
export const backlogFullError = (retryAfterSeconds: number) =>
  new ApiError(503, 'Too much accepted mail is waiting to be stored: try again later', { 'Retry-After': String(retryAfterSeconds) });
