import type { Generated } from 'kysely';

/** Milliseconds since the epoch, as stored. */
type Ms = number;

/** A tenant's webhook: target URL, subscribed events, signing secrets and health. */
export interface WebhooksTable {
  id: Generated<number>;
  tenant_id: number;
  url: string;
  /** Subscribed events as bits (see EVENT_BITS), so fan-out is one join. */
  event_mask: number;
  is_active: Generated<number>;
  /** The 64-hex signing secret; never logged, never listed. */
  secret: string;
  /** The secret replaced by the last rotation; it still signs until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: Ms | null;
  last_triggered_at: Ms | null;
  /** Time of the first failed attempt since the last success (null when healthy). */
  failing_since: Ms | null;
  deactivated_reason: string | null;
  created_at: Ms;
  updated_at: Ms;
}

/** Status of one delivery (one event for one webhook). */
export type DeliveryStatus = 'queued' | 'sending' | 'delivered' | 'failed';

/** One event for one webhook: the durable retry queue and the delivery log in one row. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: number;
  event_type: string;
  email_id: number;
  mailbox_id: number;
  /** When the event happened: the payload's `timestamp`. */
  event_at: Ms;
  status: DeliveryStatus;
  attempts: Generated<number>;
  /** The run-after time of the next attempt; null once delivered or failed. */
  next_attempt_at: Ms | null;
  last_attempt_at: Ms | null;
  /** 1 for a manual replay: one attempt, no automatic retries. */
  final_attempt: Generated<number>;
  delivered_at: Ms | null;
  created_at: Ms;
}

/** One POST of a delivery and what came of it. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  attempted_at: Ms;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

/** The tables of the webhooks capability. */
export interface WebhookTables {
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
