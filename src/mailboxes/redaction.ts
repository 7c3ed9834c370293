import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { MailboxStore } from './store.js';

/** How long plain passwords stay readable in a finished task's result. */
export const PASSWORD_VISIBLE_MS = 24 * 60 * 60 * 1000;
/** What a plain password becomes. */
export const REDACTED = '[redacted]';
const BATCH = 200;

/** Replaces every `password` field one level down in a result keyed by address. */
function redactResult(result: unknown): unknown {
  if (!result || typeof result !== 'object' || Array.isArray(result)) return result;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(result)) {
    out[k] = v && typeof v === 'object' && 'password' in v ? { ...v, password: REDACTED } : v;
  }
  return out;
}

/** Stored JSON, or `fallback` when it does not parse (or is not an object). */
function parsedOr<T extends object>(text: string, fallback: T): T {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? v as T : fallback;
  } catch {
    return fallback;
  }
}

/**
 * The password sweep: tasks that finished at least 24 hours ago get the plain passwords in their
 * result and payload replaced by "[redacted]". Returns how many tasks it redacted.
 */
export function createPasswordSweep({ db, store, clock }: { db: Db; store: MailboxStore; clock: Clock }) {
  return async function sweepPasswords(): Promise<number> {
    let done = 0;
    for (;;) {
      const due = await store.dueForRedaction(db, clock.now() - PASSWORD_VISIBLE_MS, BATCH);
      if (due.length === 0) return done;
      await db.transaction().execute(async (trx) => {
        for (const t of due) {
          // A payload or result that does not parse may still hold a password: it is dropped whole, so
          // one broken row neither keeps it nor stops the sweep of the others.
          const payload = parsedOr<Record<string, unknown>>(t.payload, {});
          if (typeof payload.password === 'string') payload.password = REDACTED;
          const result = t.result === null ? null : JSON.stringify(redactResult(parsedOr(t.result, {})));
          await store.saveRedacted(trx, t.id, JSON.stringify(payload), result);
        }
      });
      done += due.length;
      if (due.length < BATCH) return done;
    }
  };
}
