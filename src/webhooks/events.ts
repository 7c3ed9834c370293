import type { Db } from '../db/connection.js';
import type { Clock } from '../clock.js';

/** The events webhooks deliver. */
export const EVENT_TYPES = ['email.received', 'email.read', 'email.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One email event of a tenant. */
export interface EmailEvent {
  tenantId: number;
  type: EventType;
  emailId: number;
  mailboxId: number;
}

/**
 * Records email events durably. Callers record inside the transaction of the state change that
 * caused the event, so an event exists exactly when its change does; webhook fan-out hangs off
 * this same call and therefore the same transaction.
 */
export function createEventRecorder({ clock }: { clock: Clock }) {
  return {
    /** Records events in the caller's transaction; returns their ids. */
    async record(trx: Db, events: EmailEvent[]): Promise<number[]> {
      if (events.length === 0) return [];
      const now = clock.now();
      const rows = await trx.insertInto('events')
        .values(events.map((e) => ({ tenant_id: e.tenantId, type: e.type, email_id: e.emailId, mailbox_id: e.mailboxId, created_at: now })))
        .returning('id').execute();
      return rows.map((r) => r.id);
    },
  };
}
export type EventRecorder = ReturnType<typeof createEventRecorder>;
