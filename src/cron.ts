import { createTask, type ScheduledTask } from 'node-cron';
import type { Logger } from './logger.js';

/** A periodic job: it only looks at the clock and enqueues or sweeps; heavy work goes to the queue. */
export interface CronJob {
  name: string;
  /** node-cron expression (seconds field allowed). */
  schedule: string;
  run(): Promise<unknown> | unknown;
}

/**
 * Runs a job's work, or leaves it to another node (many nodes on PostgreSQL: one runs each tick,
 * see db/pg-session.ts runAlone) and resolves `skipped`. The default runs it here.
 */
export type CronExclusion = (name: string, run: () => unknown) => Promise<unknown>;

/** The process's cron loops on node-cron; jobs are also callable by name (tests, admin). */
export function createCron(logger: Logger, exclusive: CronExclusion = async (_name, run) => run()) {
  const jobs = new Map<string, CronJob>();
  const tasks: ScheduledTask[] = [];

  async function runJob(job: CronJob) {
    try {
      const outcome = await exclusive(job.name, () => job.run());
      logger.debug({ job: job.name, outcome: outcome === 'skipped' ? 'skipped' : 'ran' }, 'cron tick');
    } catch (err) {
      logger.error({ err, job: job.name }, 'cron job failed');
    }
  }

  return {
    /** Adds a job; it starts ticking with `start`. */
    add(job: CronJob) {
      jobs.set(job.name, job);
    },
    start() {
      for (const job of jobs.values()) {
        const task = createTask(job.schedule, () => runJob(job), { name: job.name, noOverlap: true, unref: true, suppressMissedWarning: true } as never);
        void task.start();
        tasks.push(task);
      }
    },
    /** Runs one job now and waits for it. */
    run: (name: string) => {
      const job = jobs.get(name);
      if (!job) throw new Error(`no cron job ${name}`);
      return runJob(job);
    },
    async stop() {
      await Promise.all(tasks.map((t) => t.destroy()));
      tasks.length = 0;
    },
  };
}
export type Cron = ReturnType<typeof createCron>;
