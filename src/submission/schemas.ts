import { inboundBody, MAX_BODY_CHARS } from '../ingest/schemas.js';
import { MAX_RECIPIENTS } from './session.js';

const address = { type: 'string', maxLength: 254, format: 'mailstead-email' } as const;
const addresses = (minItems: number) => ({ type: 'array', minItems, maxItems: MAX_RECIPIENTS, items: address }) as const;
const optionalText = { type: ['string', 'null'], maxLength: MAX_BODY_CHARS } as const;

/**
 * POST /v1/mail/send (DECISIONS.md section 13): a message rendered by us and sent on the submission
 * path. Attachments take the form of POST /v1/mail/inbound. Unknown fields are ignored.
 */
export const sendBody = {
  type: 'object',
  required: ['from', 'to', 'subject'],
  properties: {
    from: address,
    to: addresses(1),
    cc: { ...addresses(0), type: ['array', 'null'] },
    bcc: { ...addresses(0), type: ['array', 'null'] },
    subject: { type: 'string', maxLength: 10_000 },
    text: optionalText,
    html: optionalText,
    attachments: inboundBody.properties.attachments,
    in_reply_to: { type: ['string', 'null'], minLength: 1, maxLength: 998, pattern: '^<?[^<>\\s]+>?$' },
  },
} as const;

/** The send body after schema validation. */
export interface SendBody {
  from: string;
  to: string[];
  cc?: string[] | null;
  bcc?: string[] | null;
  subject: string;
  text?: string | null;
  html?: string | null;
  attachments?: Array<{ filename: string; content_type: string; content: string; content_id?: string | null; disposition?: 'attachment' | 'inline' | null }> | null;
  in_reply_to?: string | null;
}

