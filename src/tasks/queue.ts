import type { Db } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { ApiError } from '../errors.js';
import type { TaskClaims } from './ports.js';
import { sqliteClaims } from './sqlite/claims.js';
import { storableText } from '../db/storable-text.js';
import { createTaskStore, toTask, type TaskRow } from './store.js';
import { TaskInterrupted, type NewTask, type TaskHandler } from './types.js';

/** The error of a task set aside after its retries (the poll shows it; the metrics count it). */
export const SET_ASIDE_ERROR = 'Task failed: internal error';

const MAX_TIMER_MS = 60_000;

/** A row whose payload is not JSON, with a null payload in its place (for reads, not for runs). */
function readable(row: TaskRow): TaskRow {
  try {
    JSON.parse(row.payload);
    return row;
  } catch {
    return { ...row, payload: 'null' };
  }
}
/** The lane of a handler that names none. */
export const DEFAULT_LANE = 'provisioning';

/**
 * The task queue and its in-process worker. Tasks are rows in the database, enqueued inside the
 * caller's transaction; the worker wakes at once on enqueue (on every node, with PostgreSQL), runs
 * up to `concurrency` tasks of each lane at a time (`lanes` sets a lane's own count), and puts back
 * tasks a crash left `running` (`claims` says how each dialect claims and recovers: claims.ts).
 */
export function createTaskQueue({ db, clock, logger, concurrency = 4, lanes = {}, claims = sqliteClaims(db) }: {
  db: Db; clock: Clock; logger: Logger; concurrency?: number; lanes?: Readonly<Record<string, number>>; claims?: TaskClaims;
}) {
  const store = createTaskStore();
  const handlers = new Map<string, TaskHandler>();
  const inflight = new Set<Promise<void>>();
  /** Tasks running per lane. */
  const running = new Map<string, number>();
  const laneOf = (kind: string) => handlers.get(kind)?.lane ?? DEFAULT_LANE;
  const laneLimit = (lane: string) => lanes[lane] ?? concurrency;
  /** Kinds whose lane has a free slot. */
  const claimable = () => [...handlers.keys()].filter((kind) => (running.get(laneOf(kind)) ?? 0) < laneLimit(laneOf(kind)));
  let started = false;
  let stopped = false;
  let pumping = false;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  let idleWaiters: Array<() => void> = [];

  /**
   * Runs one claimed task. Anything that goes wrong with it (a payload that does not parse, a
   * handler that throws, an outcome that cannot be written) stays with this task: it is retried
   * alone with its own backoff, then set aside as `failed`, and the rest of the queue runs on.
   */
  async function execute(row: TaskRow): Promise<void> {
    const handler = handlers.get(row.kind)!;
    const log = logger.child({ task_id: row.id, kind: row.kind });
    try {
      // Parsed here, not by the claimer: a row whose stored JSON is broken fails as this task only.
      const task = toTask(row);
      const prepared = handler.prepare ? await handler.prepare(task) : undefined;
      await serializedTransaction(db, async (trx) => {
        const outcome = await handler.run(trx, task, prepared);
        await store.complete(trx, row.id, clock.now(), outcome.totalEmail ?? 0, JSON.stringify(outcome.results ?? []));
      });
      log.debug('task completed');
    } catch (err) {
      await settleFailure(row, handler, err, log);
    } finally {
      await claims.release(row.id);
    }
  }

  /** Writes what a failed run comes to: its ApiError, a retry with backoff, or the task set aside. */
  async function settleFailure(row: TaskRow, handler: TaskHandler, err: unknown, log: Logger): Promise<void> {
    try {
      if (err instanceof TaskInterrupted) {
        // A second later: until this process has stopped, claiming it again would only interrupt it again.
        await store.requeue(db, row.id, clock.now() + 1000);
        log.info('task interrupted by the stop, queued again');
      } else if (err instanceof ApiError) {
        await store.fail(db, row.id, clock.now(), storableText(err.reason));
        log.info({ reason: err.reason }, 'task failed');
      } else if (row.attempts < (handler.attempts ?? 3) && !stopped) {
        const delay = 1000 * 2 ** row.attempts;
        await store.requeue(db, row.id, clock.now() + delay);
        log.warn({ err, retry_in_ms: delay }, 'task error, will retry');
      } else {
        await store.fail(db, row.id, clock.now(), SET_ASIDE_ERROR);
        log.error({ err, attempts: row.attempts }, 'task failed after retries; set aside');
      }
    } catch (writeErr) {
      // The outcome itself could not be written (bad data in it): the plainest write there is, so
      // the task never stays `running` and is never claimed again and again.
      await store.fail(db, row.id, clock.now(), SET_ASIDE_ERROR).then(
        () => log.error({ err, writeErr }, 'task outcome could not be written; set aside'),
        (again) => log.error({ err, writeErr: again }, 'task outcome could not be written'),
      );
    }
  }

  async function pump(): Promise<void> {
    if (!started || stopped) return;
    if (pumping) { again = true; return; }
    pumping = true;
    try {
      do {
        again = false;
        while (!stopped && handlers.size > 0) {
          const open = claimable();
          if (open.length === 0) break;
          const row = await claims.claimNext(clock.now(), open);
          if (!row) break;
          const lane = laneOf(row.kind);
          running.set(lane, (running.get(lane) ?? 0) + 1);
          const p: Promise<void> = execute(row)
            .catch((err) => logger.error({ err }, 'task bookkeeping failed'))
            .finally(() => { inflight.delete(p); running.set(lane, running.get(lane)! - 1); void pump(); });
          inflight.add(p);
        }
      } while (again && !stopped);
      await armTimer();
    } catch (err) {
      logger.error({ err }, 'task worker error');
      if (!stopped) setTimeout(() => void pump(), 1000).unref();
    } finally {
      pumping = false;
    }
    if (inflight.size === 0) { for (const w of idleWaiters) w(); idleWaiters = []; }
  }

  // A timer for the earliest task that is not yet due, so delayed tasks need no polling.
  async function armTimer(): Promise<void> {
    if (timer) { clearTimeout(timer); timer = null; }
    if (stopped || handlers.size === 0) return;
    // Only lanes with a free slot: a full lane's finishing task pumps again.
    const open = claimable();
    if (open.length === 0) return;
    const next = await store.nextRunAfter(db, open);
    if (next === null) return;
    const wait = Math.min(Math.max(next - clock.now(), 0), MAX_TIMER_MS);
    timer = setTimeout(() => { timer = null; void pump(); }, Math.max(wait, 5));
    timer.unref();
  }

  return {
    /** Registers the handlers of a capability. */
    register(...list: TaskHandler[]) {
      for (const h of list) handlers.set(h.kind, h);
    },

    /** Adds a task inside the caller's transaction; the worker picks it up once that commits. */
    async enqueue(trx: Db, t: NewTask): Promise<number> {
      const now = clock.now();
      const id = await store.insert(trx, {
        kind: t.kind, tenant_id: t.tenantId, key_id: t.keyId, domain: t.domain ?? '',
        payload: JSON.stringify(t.payload ?? {}), run_after: t.runAfter ?? now, created_at: now,
      });
      // The wake-up claims only once the caller's transaction committed (claims.ts says how).
      await claims.afterEnqueue(trx, () => void pump());
      return id;
    },

    /** Reads a task by id, or undefined; a stored payload that does not parse reads as null (the task is failed by then). */
    get: (id: number) => store.byId(db, id).then((r) => (r ? toTask(readable(r)) : undefined)),

    /** Recovers tasks left running by a crash and starts working. */
    async start() {
      const n = await claims.recover(true);
      if (n > 0) logger.info({ recovered: n }, 'tasks left running were queued again');
      await claims.listen(() => void pump());
      started = true;
      void pump();
    },

    /** Queues again tasks whose node died while running them (many nodes; nothing to do for one). */
    async recoverOrphans(): Promise<number> {
      const n = await claims.recover(false);
      if (n > 0) { logger.info({ recovered: n }, 'tasks of a node that is gone were queued again'); void pump(); }
      return n;
    },

    /** Deletes finished system tasks older than `ageMs` (DNS checks and the like pile up otherwise). */
    pruneSystemTasks: (ageMs: number) => store.pruneSystem(db, clock.now() - ageMs),

    /** Looks for due work now (after the clock moved, in tests, or after a cron tick). */
    wake: () => pump(),

    /** Resolves once no task is running (tests and benchmarks). */
    idle: () => (inflight.size === 0 && !pumping ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r))),

    /** Stops claiming and waits for the tasks under way to finish. */
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([...inflight]);
    },
  };
}
export type TaskQueue = ReturnType<typeof createTaskQueue>;
