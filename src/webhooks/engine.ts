import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { DeliveryClaims } from './ports.js';
import type { ClaimedDelivery, DeliveryStore } from './delivery-store.js';
import type { QueuedHint } from './events.js';
import { EVENT_TYPES } from './events.js';
import { applyOutcomes, FAULT_BACKOFF_MS, FAULT_LIMIT, SET_ASIDE, type Outcome } from './outcomes.js';
import type { Sender } from './sender.js';
import { verdictOf, type Verdict } from './schedule.js';
import { signedRequest } from './signing.js';
import type { WebhookStore } from './store.js';

/** Tuning of the delivery engine. */
export interface EngineOptions {
  /** Requests in flight at once, over all webhooks. */
  maxInFlight?: number;
  /** Requests in flight at once to one webhook, so one slow receiver cannot hold up the others. */
  perWebhook?: number;
  /** How long a finished attempt may wait for company before its outcome is written. */
  flushDelayMs?: number;
  /** Outcomes that trigger a write at once. */
  flushBatch?: number;
  /** At shutdown, how long requests under way may take before they are cut short. */
  stopGraceMs?: number;
  /** Source of jitter. */
  random?: () => number;
}

const MAX_TIMER_MS = 30_000;

const EVENTS: ReadonlySet<string> = new Set(EVENT_TYPES);
const isId = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** What is wrong with a claimed delivery as stored, so that it cannot be sent; null when nothing is. */
export function rowProblem(d: ClaimedDelivery): string | null {
  if (!EVENTS.has(d.event_type)) return `unknown event type ${JSON.stringify(String(d.event_type).slice(0, 40))}`;
  if (!isId(d.email_id) || !isId(d.mailbox_id)) return 'email or mailbox id is not an id';
  if (!Number.isFinite(d.event_at)) return 'event time is not a time';
  return null;
}

/** Default bound of requests in flight to one webhook (also its connections per origin). */
export const PER_WEBHOOK_CONCURRENCY = 32;

/**
 * The delivery engine: its own loop over the delivery rows, not one task per delivery. A cycle
 * writes the outcomes of finished attempts and claims due deliveries in one transaction (one
 * fsync), then sends the claimed ones concurrently through the shared undici Agent, within a
 * global and a per-webhook bound. Which webhooks have due work is kept as in-memory hints
 * (webhook id -> earliest due time), fed by the event recorder, by retries and replays, and
 * rebuilt from SQLite at start and by the sweep, so a claim never scans another webhook's
 * backlog. The rows stay the truth: their run-after times (next_attempt_at) survive restarts.
 */
export function createDeliveryEngine(deps: {
  db: Db; clock: Clock; logger: Logger; store: WebhookStore; deliveries: DeliveryStore; sender: Sender; options?: EngineOptions;
  /** Ties `sending` deliveries to this node (claims.ts): many nodes on PostgreSQL recover only a dead node's. */
  claims: DeliveryClaims;
  /** Counts each finished attempt by its verdict (metrics). */
  onAttempt?: (verdict: Verdict | 'aborted') => void;
}) {
  const { db, clock, logger, store, deliveries, sender, claims } = deps;
  const maxInFlight = deps.options?.maxInFlight ?? 512;
  const perWebhook = deps.options?.perWebhook ?? PER_WEBHOOK_CONCURRENCY;
  const flushDelayMs = deps.options?.flushDelayMs ?? 5;
  const flushBatch = deps.options?.flushBatch ?? 256;
  const stopGraceMs = deps.options?.stopGraceMs ?? 1000;
  const random = deps.options?.random ?? Math.random;

  const hints = new Map<number, number>();
  const inFlightBy = new Map<number, number>();
  const sends = new Set<Promise<void>>();
  let inFlight = 0;
  let outcomes: Outcome[] = [];
  let started = false;
  let stopping = false;
  let running: Promise<void> | null = null;
  let again = false;
  let kickTimer: NodeJS.Timeout | null = null;
  let dueTimer: NodeJS.Timeout | null = null;
  const stats = { sent: 0, delivered: 0 };

  const roomOf = (webhookId: number) => perWebhook - (inFlightBy.get(webhookId) ?? 0);

  function hint(webhookId: number, at: number): void {
    const known = hints.get(webhookId);
    if (known === undefined || at < known) hints.set(webhookId, at);
  }

  /** Runs one cycle now, or right after the one under way. */
  function kick(delayMs = 0): void {
    if (!started) return;
    if (stopping) delayMs = 0;
    if (running) { again = true; return; }
    if (delayMs === 0) {
      if (kickTimer) { clearTimeout(kickTimer); kickTimer = null; }
      running = cycle();
      return;
    }
    kickTimer ??= setTimeout(() => { kickTimer = null; kick(0); }, delayMs);
  }

  async function cycle(): Promise<void> {
    try {
      do {
        again = false;
        await cycleOnce();
      } while (again && (!stopping || outcomes.length > 0));
      armDueTimer();
    } catch (err) {
      logger.error({ err }, 'webhook engine cycle failed');
      if (!stopping) setTimeout(() => kick(0), 1000).unref();
    } finally {
      running = null;
    }
  }

  async function cycleOnce(): Promise<void> {
    const batch = outcomes;
    outcomes = [];
    const now = clock.now();
    const ready = stopping ? [] : [...hints].filter(([id, at]) => at <= now && roomOf(id) > 0).sort((a, b) => a[1] - b[1]);
    if (batch.length === 0 && (ready.length === 0 || inFlight >= maxInFlight)) return;
    let claimed: ClaimedDelivery[] = [];
    try {
      await deliveries.bookkeeping(db, async (trx) => {
        if (batch.length > 0) await record(trx, batch, now);
        claimed = await claim(trx, ready.map(([id]) => id), now);
        // Held before the claim commits, so no other node ever sees these `sending` without an owner.
        await claims.hold(claimed.map((d) => d.id));
      });
    } catch (err) {
      await claims.letGo(claimed.map((d) => d.id)).catch(() => undefined); // the claim rolled back
      if (batch.length === 0) throw err; // claiming alone failed: the database is away
      // One outcome that cannot be written must hold back neither the others nor every claim after
      // it: each is written alone, and the claim comes in the next turn.
      logger.warn({ err, outcomes: batch.length }, 'writing webhook outcomes failed; writing them one by one');
      for (const o of batch) {
        try {
          await deliveries.bookkeeping(db, (trx) => record(trx, [o], now));
          unwritable.delete(o.delivery.id);
          await claims.letGo([o.delivery.id]);
        } catch (alone) {
          await cannotWrite(o, alone, now);
        }
      }
      again = true;
      return;
    }
    // Their outcomes are committed: they are no longer this node's to send.
    await claims.letGo(batch.map((o) => o.delivery.id));
    for (const d of claimed) dispatch(d, now);
  }

  /** Writes outcomes (in the caller's transaction) and learns from them. */
  async function record(trx: Db, batch: Outcome[], now: number): Promise<void> {
    const { retries, gone, setAside } = await applyOutcomes({ db: trx, store, deliveries, now, random }, batch);
    for (const r of retries) hint(r.webhookId, r.at);
    if (gone.length > 0) logger.info({ webhook_ids: gone }, 'webhooks answered 410 Gone and were deactivated');
    if (setAside.length > 0) logger.error({ set_aside: setAside }, 'webhook deliveries that could not be sent were set aside (failed)');
  }

  /** Outcomes that could not be written alone, by delivery: how many times in a row, and those waiting to be tried again. */
  const unwritable = new Map<number, number>();
  const parked = new Map<Outcome, NodeJS.Timeout>();

  /**
   * An outcome that cannot be written even alone waits a little (doubling) and is tried again; the
   * FAULT_LIMIT-th time its delivery is failed by the plainest write there is, so it never comes
   * back to fail every cycle. Should even that fail (the database is away), it keeps waiting.
   */
  async function cannotWrite(o: Outcome, err: unknown, now: number): Promise<void> {
    const n = (unwritable.get(o.delivery.id) ?? 0) + 1;
    unwritable.set(o.delivery.id, n);
    if (n >= FAULT_LIMIT) {
      const note = { delivery_id: o.delivery.id, attempt: o.delivery.attempts + 1, attempted_at: o.attemptedAt, status_code: null, latency_ms: 0, error: `${SET_ASIDE}its outcome could not be written` };
      try {
        // With a line in its attempt log if that can be written, else without.
        await deliveries.bookkeeping(db, async (trx) => {
          await deliveries.markFailed(trx, [o.delivery.id], now);
          await deliveries.insertAttempts(trx, [note]);
        }).catch(() => deliveries.bookkeeping(db, (trx) => deliveries.markFailed(trx, [o.delivery.id], now)));
        unwritable.delete(o.delivery.id);
        await claims.letGo([o.delivery.id]);
        logger.error({ err, delivery_id: o.delivery.id }, 'a webhook outcome could not be written; the delivery was set aside (failed)');
        return;
      } catch { /* the database is away: wait as below */ }
    }
    const timer = setTimeout(() => { parked.delete(o); outcomes.push(o); kick(0); }, FAULT_BACKOFF_MS * 2 ** Math.min(n - 1, 5));
    timer.unref();
    parked.set(o, timer);
  }

  async function claim(trx: Db, webhookIds: number[], now: number): Promise<ClaimedDelivery[]> {
    const ids: number[] = [];
    let room = maxInFlight - inFlight;
    for (const webhookId of webhookIds) {
      if (room <= 0) break;
      const take = Math.min(roomOf(webhookId), room);
      const due = await deliveries.dueFor(trx, webhookId, now, take);
      ids.push(...due);
      room -= due.length;
      if (due.length < take) {
        // Everything due now was taken: remember when the next one falls due, if any is queued.
        const next = await deliveries.nextDueFor(trx, webhookId, now);
        if (next === null) hints.delete(webhookId); else hints.set(webhookId, next);
      }
    }
    return ids.length === 0 ? [] : deliveries.claim(trx, ids);
  }

  function dispatch(d: ClaimedDelivery, now: number): void {
    inFlight++;
    inFlightBy.set(d.webhook_id, (inFlightBy.get(d.webhook_id) ?? 0) + 1);
    const attemptedAt = clock.now();
    const settled = () => {
      inFlight--;
      const left = (inFlightBy.get(d.webhook_id) ?? 1) - 1;
      if (left > 0) inFlightBy.set(d.webhook_id, left); else inFlightBy.delete(d.webhook_id);
      kick(outcomes.length >= flushBatch ? 0 : flushDelayMs);
    };
    let req: ReturnType<typeof signedRequest>;
    try {
      const problem = rowProblem(d);
      if (problem) throw new Error(problem);
      const secrets = [d.secret];
      if (d.previous_secret && d.previous_secret_until !== null && d.previous_secret_until > now) secrets.push(d.previous_secret);
      req = signedRequest({
        deliveryId: d.id, event: d.event_type, eventAt: d.event_at, emailId: d.email_id, mailboxId: d.mailbox_id, spamVerdict: d.spam_verdict,
        timestamp: Math.floor(attemptedAt / 1000), secrets,
      });
    } catch (err) {
      // Bad data in this row: nothing is sent, and it goes its own way (outcomes.ts) while the others go on.
      logger.warn({ delivery_id: d.id, err }, 'a webhook delivery cannot be sent as stored');
      outcomes.push({ delivery: d, attemptedAt, fault: true, result: { statusCode: null, retryAfter: undefined, latencyMs: 0, error: (err as Error).message, aborted: false } });
      settled();
      return;
    }
    const p: Promise<void> = sender.post(d.url, req.headers, req.body).then((result) => {
      stats.sent++;
      const verdict = result.aborted ? 'aborted' : verdictOf(result.statusCode);
      if (verdict === 'delivered') stats.delivered++;
      deps.onAttempt?.(verdict);
      outcomes.push({ delivery: d, attemptedAt, result });
    }).finally(() => {
      sends.delete(p);
      settled();
    });
    sends.add(p);
  }

  // A timer for the earliest hint of a webhook with room; busy webhooks are woken by their completions.
  function armDueTimer(): void {
    if (dueTimer) { clearTimeout(dueTimer); dueTimer = null; }
    if (stopping || !started) return;
    let next = Infinity;
    for (const [id, at] of hints) if (roomOf(id) > 0 && at < next) next = at;
    if (next === Infinity) return;
    const wait = Math.min(Math.max(next - clock.now(), 0), MAX_TIMER_MS);
    if (wait === 0 && inFlight >= maxInFlight) return;
    dueTimer = setTimeout(() => { dueTimer = null; kick(0); }, Math.max(wait, 1));
    dueTimer.unref();
  }

  /** Rebuilds the hints from SQLite: the safety net under the in-memory bookkeeping. */
  async function resync(): Promise<void> {
    for (const id of await store.activeIds(db)) {
      const next = await deliveries.nextDueFor(db, id, null);
      if (next === null) hints.delete(id); else hint(id, next);
    }
  }

  return {
    stats,

    /** Tells the engine that webhooks have new due work (from the event recorder, a replay). */
    notify(list: QueuedHint[]): void {
      for (const h of list) hint(h.webhookId, h.at);
      kick(0);
    },

    /** Looks for due work now (after the clock moved in a test, from the sweep). */
    wake(): void { kick(0); },

    /**
     * Resolves once no cycle runs, no attempt is in flight and no outcome waits to be written: what
     * the engine was asked to do (a wake, a notify) is done, so a test can tell that nothing was sent.
     */
    async idle(): Promise<void> {
      for (;;) {
        if (running) await running;
        else if (sends.size > 0) await Promise.allSettled([...sends]);
        else if (started && (kickTimer || outcomes.length > 0)) kick(0);
        else return;
      }
    },

    resync,

    /** Queues again the deliveries a node that is gone left `sending` (many nodes; nothing for one), then looks for due work. */
    async recoverOrphans(): Promise<number> {
      const recovered = await claims.recover(false);
      if (recovered > 0) logger.info({ recovered }, 'webhook deliveries of a node that is gone were queued again');
      return recovered;
    },

    /** Returns deliveries a crash left `sending` to the queue (on PostgreSQL: those no live node holds), learns what is due, and starts sending. */
    async start(): Promise<void> {
      const recovered = await claims.recover(true);
      if (recovered > 0) logger.info({ recovered }, 'webhook deliveries left in flight were queued again');
      await resync();
      started = true;
      kick(0);
    },

    /** Stops claiming, gives requests under way a moment, cuts the rest short, and writes every outcome. */
    async stop(): Promise<void> {
      if (!started) { await sender.close(); return; }
      stopping = true;
      if (kickTimer) clearTimeout(kickTimer);
      if (dueTimer) clearTimeout(dueTimer);
      const grace = new Promise<void>((r) => setTimeout(r, stopGraceMs).unref());
      await Promise.race([Promise.allSettled([...sends]), grace]);
      sender.abortAll();
      await Promise.allSettled([...sends]);
      while (running) await running;
      // Outcomes waiting to be written again get one more try now (else their deliveries wait, `sending`, for the next start).
      for (const [o, timer] of parked) { clearTimeout(timer); outcomes.push(o); }
      parked.clear();
      if (outcomes.length > 0) { running = cycle(); await running; }
      started = false;
      await sender.close();
    },

    /** Counts for tests and the benchmark. */
    inFlight: () => inFlight,
  };
}
export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
