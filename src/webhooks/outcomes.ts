import type { Db } from '../db/connection.js';
import { storableText } from '../db/storable-text.js';
import type { ClaimedDelivery, DeliveryStore, NewAttempt } from './delivery-store.js';
import type { QueuedHint } from './events.js';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelay, verdictOf } from './schedule.js';
import type { SendResult } from './sender.js';
import type { WebhookStore } from './store.js';

/** A finished send, waiting to be written. */
export interface Outcome {
  delivery: ClaimedDelivery;
  attemptedAt: number;
  result: SendResult;
  /** Nothing was sent: the row itself is bad (engine.ts rowProblem). Retried on a short backoff of its own, then set aside. */
  fault?: boolean;
}

/** Local errors (a delivery row that cannot be sent) after which a delivery is set aside as `failed`. */
export const FAULT_LIMIT = 3;
/** The wait after the first local error; doubled after each one. */
export const FAULT_BACKOFF_MS = 1_000;
/** How the attempt log marks a local error, and the attempt that set a delivery aside. */
export const LOCAL_ERROR = 'local error: ';
export const SET_ASIDE = 'set aside: ';

/**
 * Writes a batch of finished sends inside the engine's transaction (DECISIONS.md section 9): 2xx
 * delivers; 410 fails the delivery and deactivates the webhook at once (its queued deliveries are
 * cancelled); anything else retries on the schedule (Retry-After instead on 429 and 503) until
 * the attempts are used up, and a replay, or a webhook that is no longer active, fails at once.
 * Every attempt is logged, the webhook's last_triggered_at and failing streak are stamped, and
 * sends cut short by a shutdown go back to the queue uncounted. Returns when retries fall due.
 */
export async function applyOutcomes(
  ctx: { db: Db; store: WebhookStore; deliveries: DeliveryStore; now: number; random: () => number },
  batch: Outcome[],
): Promise<{ retries: QueuedHint[]; gone: number[]; setAside: Array<{ delivery_id: number; reason: string | null }> }> {
  const { db, store, deliveries, now, random } = ctx;
  const hints: QueuedHint[] = [];
  const released = batch.filter((o) => o.result.aborted);
  if (released.length > 0) {
    await deliveries.release(db, released.map((o) => o.delivery.id));
    for (const o of released) hints.push({ webhookId: o.delivery.webhook_id, at: now });
  }
  const real = batch.filter((o) => !o.result.aborted);
  if (real.length === 0) return { retries: hints, gone: [], setAside: [] };

  // The webhook may have been deleted (its deliveries with it) or deactivated while the request ran.
  const exists = await deliveries.existing(db, real.map((o) => o.delivery.id));
  const live = real.filter((o) => exists.has(o.delivery.id));
  const webhookIds = [...new Set(live.map((o) => o.delivery.webhook_id))];
  const active = new Set(live.filter((o) => exists.get(o.delivery.id)).map((o) => o.delivery.webhook_id));
  const gone = new Set(live.filter((o) => verdictOf(o.result.statusCode) === 'gone').map((o) => o.delivery.webhook_id));

  const delivered: number[] = [];
  const failed: number[] = [];
  const setAside: Array<{ delivery_id: number; reason: string | null }> = [];
  const attempts: NewAttempt[] = [];
  for (const o of live) {
    const d = o.delivery;
    const made = d.attempts + 1;
    // A receiver's answer is outside text: stored as the database can hold it (no NUL on PostgreSQL).
    const error = o.result.error === null ? null : storableText(o.result.error, 300);
    if (o.fault) {
      // The row itself is bad: its own few quick tries, counted in its attempt log, then set aside.
      const faults = (await deliveries.localErrors(db, d.id)) + 1;
      const last = faults >= FAULT_LIMIT || d.final_attempt === 1;
      attempts.push({ delivery_id: d.id, attempt: made, attempted_at: o.attemptedAt, status_code: null, latency_ms: 0, error: (last ? SET_ASIDE : LOCAL_ERROR) + error });
      if (last) { failed.push(d.id); setAside.push({ delivery_id: d.id, reason: error }); continue; }
      const at = now + FAULT_BACKOFF_MS * 2 ** (faults - 1);
      await deliveries.markRetry(db, d.id, at, now);
      hints.push({ webhookId: d.webhook_id, at });
      continue;
    }
    attempts.push({ delivery_id: d.id, attempt: made, attempted_at: o.attemptedAt, status_code: o.result.statusCode, latency_ms: o.result.latencyMs, error });
    const verdict = verdictOf(o.result.statusCode);
    if (verdict === 'delivered') { delivered.push(d.id); continue; }
    if (verdict === 'gone' || d.final_attempt === 1 || !active.has(d.webhook_id) || gone.has(d.webhook_id) || made >= MAX_ATTEMPTS) {
      failed.push(d.id);
      continue;
    }
    const asked = o.result.statusCode === 429 || o.result.statusCode === 503 ? parseRetryAfter(o.result.retryAfter, now) : null;
    const wait = asked ?? retryDelay(made, random);
    if (wait === null) { failed.push(d.id); continue; }
    await deliveries.markRetry(db, d.id, now + wait, now);
    hints.push({ webhookId: d.webhook_id, at: now + wait });
  }
  await deliveries.markDelivered(db, delivered, now);
  await deliveries.markFailed(db, failed, now);
  await deliveries.insertAttempts(db, attempts);

  for (const webhookId of webhookIds) {
    // A bad row of ours says nothing about the receiver's health.
    const mine = live.filter((o) => o.delivery.webhook_id === webhookId && !o.fault);
    if (mine.length === 0) continue;
    const lastOk = mine.findLastIndex((o) => verdictOf(o.result.statusCode) === 'delivered');
    const firstFailAfter = mine.slice(lastOk + 1)[0];
    const at = Math.max(...mine.map((o) => o.attemptedAt));
    const streak = lastOk >= 0 ? { set: firstFailAfter?.attemptedAt ?? null } : firstFailAfter ? { keepOr: firstFailAfter.attemptedAt } : null;
    await store.markTriggered(db, webhookId, at, streak);
  }
  for (const webhookId of gone) {
    await store.deactivate(db, webhookId, 'gone', now);
    await deliveries.cancelQueued(db, webhookId);
  }
  return { retries: hints, gone: [...gone], setAside };
}
