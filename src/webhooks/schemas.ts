import { idSchema } from '../http/validate.js';
import { EVENT_TYPES } from './events.js';
import { MAX_URL_LENGTH } from './target.js';

// The URL's form (https, public address) is checked by the service, which also resolves the name.
const url = { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH } as const;
const events = { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...EVENT_TYPES] } } as const;

/** POST /v1/webhooks */
export const createWebhookBody = {
  type: 'object',
  required: ['url', 'events'],
  properties: { url, events, is_active: { type: 'boolean' } },
} as const;
export interface CreateWebhookBody { url: string; events: string[]; is_active?: boolean }

/** PATCH /v1/webhooks/{webhook}: at least one field (checked by the service, with a clear reason). */
export const updateWebhookBody = {
  type: 'object',
  properties: { url, events, is_active: { type: 'boolean' } },
} as const;
export interface UpdateWebhookBody { url?: string; events?: string[]; is_active?: boolean }

/** {webhook} in the path. */
export const webhookParams = {
  type: 'object',
  required: ['webhook'],
  properties: { webhook: idSchema },
} as const;
export interface WebhookParams { webhook: number }

/** {webhook} and {delivery} in the path. */
export const deliveryParams = {
  type: 'object',
  required: ['webhook', 'delivery'],
  properties: { webhook: idSchema, delivery: idSchema },
} as const;
export interface DeliveryParams { webhook: number; delivery: number }

/** GET /v1/webhooks/{webhook}/deliveries */
export const deliveriesQuery = {
  type: 'object',
  properties: {
    per_page: { type: 'integer', minimum: 1, maximum: 100 },
    cursor: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
    status: { type: 'string', enum: ['queued', 'sending', 'delivered', 'failed'] },
  },
} as const;
export interface DeliveriesQuery { per_page?: number; cursor?: string; status?: string }
