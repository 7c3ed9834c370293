import type { ApiKey } from '../tenants/service.js';
import { notFound, unprocessable } from '../errors.js';
import type { Task } from './types.js';
import type { TaskQueue } from './queue.js';

/**
 * The one rule for every poll endpoint: 404 for an unknown task or one created by another key,
 * 422 for a task of another kind, 422 with the task's error for a failed one (or with
 * `failedReason`, where a contract fixes the words); else the task.
 */
export async function pollTask(queue: TaskQueue, key: ApiKey, taskId: number, kinds: readonly string[], failedReason?: string): Promise<Task> {
  const task = await queue.get(taskId);
  if (!task || task.keyId !== key.id) throw notFound('Task not found');
  if (!kinds.includes(task.kind)) throw unprocessable('Task is not of the kind this endpoint polls');
  if (task.status === 'failed') throw unprocessable(failedReason ?? task.error ?? 'Task failed');
  return task;
}

/** The Task envelope of SPEC.md: both ids, status, total_email, domain, results ([] until completed). */
export function taskEnvelope(task: Task, results: unknown = task.status === 'completed' ? task.results : []) {
  return {
    Task_id: task.id,
    task_id: String(task.id),
    status: task.status,
    total_email: task.totalEmail,
    domain: task.domain,
    results,
  };
}

/** The short envelope of alias polls: Task_id, status, results (array) and task_id. */
export function shortTaskEnvelope(task: Task) {
  return { Task_id: task.id, status: task.status, results: [] as unknown[], task_id: String(task.id) };
}
