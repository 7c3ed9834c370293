import type { CronJob } from '../cron.js';
import type { TaskQueue } from './queue.js';

/** How long finished system tasks (key-less, made by cron) are kept. */
export const SYSTEM_TASK_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** The queue's own clean-up: an hourly sweep of old finished system tasks. Client tasks stay pollable. */
export const taskCronJobs = (queue: TaskQueue): CronJob[] => [
  { name: 'tasks.prune', schedule: '17 * * * *', run: () => queue.pruneSystemTasks(SYSTEM_TASK_RETENTION_MS) },
  // Every minute: a node that died mid-task leaves it running; another node queues it again.
  // The look at the queue also takes tasks another process made due (`mailstead set-aside retry tasks`).
  { name: 'tasks.recover', schedule: '* * * * *', run: async () => { await queue.recoverOrphans(); queue.wake(); } },
];
