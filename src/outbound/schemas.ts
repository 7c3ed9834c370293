import { idSchema } from '../http/validate.js';

/** GET /v1/outbound */
export const outboundListQuery = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['queued', 'sent', 'failed'] },
    cursor: { type: 'string', minLength: 1, maxLength: 200 },
    per_page: { type: 'integer', minimum: 1, maximum: 100 },
  },
} as const;
export interface OutboundListQuery { status?: 'queued' | 'sent' | 'failed'; cursor?: string; per_page?: number }

/** {id} in the path. */
export const outboundParams = {
  type: 'object',
  required: ['id'],
  properties: { id: idSchema },
} as const;
export interface OutboundParams { id: number }

/** One outbound item as the API shows it (DECISIONS.md section 12). */
export const outboundItemSchema = {
  type: 'object',
  required: ['id', 'kind', 'email_id', 'mail_from', 'rcpt_to', 'status', 'attempts', 'next_attempt_at', 'last_response', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    kind: { type: 'string', enum: ['forward', 'submission', 'dsn'] },
    email_id: { type: ['integer', 'null'] },
    mail_from: { type: 'string', description: '"" for the null sender' },
    rcpt_to: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'sent', 'failed'] },
    attempts: { type: 'integer' },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
    last_response: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The item in API form. */
export interface OutboundItem {
  id: number;
  kind: 'forward' | 'submission' | 'dsn';
  email_id: number | null;
  mail_from: string;
  rcpt_to: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_response: string | null;
  created_at: string;
  updated_at: string;
}
