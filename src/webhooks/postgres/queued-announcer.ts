import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { NodeSession } from '../../db/pg-session.js';
import type { QueuedHint } from '../event-types.js';
import type { QueuedAnnouncer } from '../ports.js';

/** The channel of "deliveries were queued for these webhooks" on PostgreSQL. */
export const QUEUED_CHANNEL = 'mailstead_webhooks';
/** Longest payload sent (PostgreSQL takes up to 8000 bytes); a longer list is sent empty: look at every webhook. */
const MAX_PAYLOAD = 7000;

/**
 * PostgreSQL delivers a NOTIFY at commit, to every node (this one included, through
 * `listenQueued`): each engine then claims rows it can see. Nothing is told in-process.
 */
export function createPostgresQueuedAnnouncer(): QueuedAnnouncer {
  return {
    async announce(trx: Db, webhookIds: number[]) {
      const payload = JSON.stringify(webhookIds);
      await sql`SELECT pg_notify(${QUEUED_CHANNEL}, ${payload.length <= MAX_PAYLOAD ? payload : ''})`.execute(trx);
    },
  };
}

/**
 * Hears the deliveries queued on any node (PostgreSQL): `hint` with the webhooks named, or
 * `everything` when the list was too long or notifications may have been lost (a reconnect).
 */
export function listenQueued(session: NodeSession, now: () => number, on: { hint(hints: QueuedHint[]): void; everything(): void }): Promise<void> {
  return session.listen(QUEUED_CHANNEL, (payload) => {
    let ids: unknown = null;
    try { ids = payload ? JSON.parse(payload) : null; } catch { /* not ours: look at everything */ }
    if (Array.isArray(ids) && ids.every((id) => Number.isSafeInteger(id))) on.hint(ids.map((webhookId: number) => ({ webhookId, at: now() })));
    else on.everything();
  });
}
