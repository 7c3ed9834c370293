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

/** Deliveries that a record call queued, per webhook: the engine's hint that work is due. */
export type QueuedHint = { webhookId: number; at: number };
