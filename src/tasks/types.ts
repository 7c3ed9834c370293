import type { Trx } from '../db/connection.js';

/** A task as handlers and polls see it: the row with its payload parsed. */
export interface Task<P = any> {
  id: number;
  kind: string;
  tenantId: number | null;
  keyId: number | null;
  domain: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  payload: P;
  results: unknown;
  totalEmail: number;
  error: string | null;
  attempts: number;
  createdAt: number;
  finishedAt: number | null;
}

/** What a handler returns: stored on the task and shown by its poll. */
export interface TaskOutcome {
  totalEmail?: number;
  results: unknown;
}

/**
 * A task kind, declared as data and registered by its capability. `prepare` does slow work that
 * needs no database (key generation, network) and may overlap with other tasks; `run` makes the
 * state change inside one transaction that also records the outcome, so a crash leaves either
 * nothing or everything. Both must be idempotent: a task left `running` by a crash runs again.
 * A thrown ApiError fails the task with its reason; any other error is retried up to `attempts`.
 */
export interface TaskHandler<P = any, R = unknown> {
  kind: string;
  attempts?: number;
  /**
   * The worker slots the kind runs in (default `provisioning`). Kinds that may wait on the outside
   * world for seconds (DNS checks) get a lane of their own, so a slow zone never delays another
   * tenant's mailbox or domain.
   */
  lane?: string;
  prepare?(task: Task<P>): Promise<R>;
  run(trx: Trx, task: Task<P>, prepared: R): Promise<TaskOutcome>;
}

/** What `enqueue` needs. */
export interface NewTask {
  kind: string;
  tenantId: number | null;
  keyId: number | null;
  domain?: string;
  payload?: unknown;
  runAfter?: number;
}

/**
 * Thrown by a long task that stopped because the process is stopping: it is queued again at once
 * (not failed, not counted as an error), and resumes from what it committed.
 */
export class TaskInterrupted extends Error {}
