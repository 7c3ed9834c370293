import { sql } from 'kysely';
import type { Db } from './db/connection.js';
import { createBlobStore } from './ingest/blobs.js';
import { createInboundSetAside } from './ingest/set-aside-queue.js';
import { createIngestStore } from './mailstore/inbound-store.js';
import { createOutboundStore } from './mailstore/outbound-store.js';
import { OUTBOUND_CHANNEL } from './outbound/claims.js';
import { createOutboundSetAside } from './outbound/set-aside.js';
import { SET_ASIDE_QUEUES, type SetAsideQueue, type SetAsideQueueName } from './set-aside/queue.js';
import { TASKS_CHANNEL } from './tasks/postgres/claims.js';
import { createTaskSetAside } from './tasks/set-aside.js';
import { createTaskStore } from './tasks/store.js';
import { createDeliveryStore } from './webhooks/delivery-store.js';
import { QUEUED_CHANNEL } from './webhooks/postgres/queued-announcer.js';
import { createWebhookSetAside } from './webhooks/set-aside.js';

/** A command-line mistake (the CLI answers it with exit code 2). */
export type Usage = (message: string) => never;

export const SET_ASIDE_USAGE = `mailstead set-aside list [QUEUE]
  mailstead set-aside retry [QUEUE] ID
  mailstead set-aside discard [QUEUE] ID
    QUEUE: ${SET_ASIDE_QUEUES.join(', ')} (default inbound)`;

/**
 * Each queue's set-aside rows, from a process beside the running server. A retry tells the server:
 * on PostgreSQL every node at once (NOTIFY on the queue's channel); on SQLite the server finds it
 * when it next looks (inbound and outbound poll every few seconds, webhook deliveries and tasks
 * are looked for once a minute).
 */
function queues(db: Db, dataDir: string, postgres: boolean): Record<SetAsideQueueName, SetAsideQueue> {
  const notify = (channel: string) => async () => { if (postgres) await sql`SELECT pg_notify(${channel}, '')`.execute(db); };
  const blobs = createBlobStore(dataDir);
  const ingestStore = createIngestStore();
  const now = () => Date.now();
  return {
    inbound: createInboundSetAside({ db, store: ingestStore, removeRaw: (name) => blobs.remove(blobs.rawFile(name)) }),
    outbound: createOutboundSetAside({ db, store: createOutboundStore(), ingestStore, now, wake: notify(OUTBOUND_CHANNEL) }),
    webhooks: createWebhookSetAside({ db, deliveries: createDeliveryStore(), now, notify: notify(QUEUED_CHANNEL) }),
    tasks: createTaskSetAside({ db, store: createTaskStore(), now, wake: notify(TASKS_CHANNEL) }),
  };
}

/**
 * `mailstead set-aside list|retry|discard [QUEUE] [ID]` (src/cli.ts): the operator's face of the
 * rows a queue set aside, on either database, while the server runs. `list` prints them as one JSON
 * array (oldest first), `retry` prints `queued`, `discard` prints `discarded`. An unknown queue or id
 * is a usage error.
 */
export async function setAsideCommand(o: { db: Db; dataDir: string; postgres: boolean; verb: string | undefined; args: string[]; usage: Usage }): Promise<string> {
  const args = [...o.args];
  const name = (SET_ASIDE_QUEUES as readonly string[]).includes(args[0] ?? '') ? args.shift() as SetAsideQueueName : 'inbound';
  if (args[0] !== undefined && !/^[0-9]+$/.test(args[0])) o.usage(`unknown queue "${args[0]}" (one of ${SET_ASIDE_QUEUES.join(', ')})`);
  const queue = queues(o.db, o.dataDir, o.postgres)[name];
  if (o.verb === 'list') {
    if (args.length) o.usage('set-aside list takes no ID');
    return JSON.stringify(await queue.list());
  }
  if (args.length !== 1 || !/^[1-9][0-9]{0,15}$/.test(args[0]!)) o.usage(`set-aside ${o.verb} takes exactly one ID (a positive integer)`);
  const id = Number(args[0]);
  if (o.verb === 'retry') {
    if (!(await queue.retry(id))) o.usage(`nothing set aside in ${name} with id ${id}`);
    return 'queued';
  }
  if (!(await queue.discard(id))) o.usage(`nothing set aside in ${name} with id ${id}`);
  return 'discarded';
}
