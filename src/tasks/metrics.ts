import { Gauge, type Registry } from 'prom-client';
import type { TaskQueue } from './queue.js';

/** The queue's gauge of tasks set aside after their retries (failed with an internal error). */
export function registerTaskMetrics(registry: Registry, queue: TaskQueue): void {
  new Gauge({
    name: 'mailstead_tasks_set_aside', help: 'Tasks set aside (failed) after their retries ran out', registers: [registry],
    async collect() { this.set(await queue.setAside()); },
  });
}
