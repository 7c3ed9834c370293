/** Largest inbound JSON body (DECISIONS.md section 7): 35 MB. */
export const INBOUND_BODY_LIMIT = 35 * 1024 * 1024;
/** Largest total of decoded attachments of one message: 25 MB. */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** Largest body_text or body_html, in characters. */
export const MAX_BODY_CHARS = 10 * 1024 * 1024;

const address = { type: 'string', maxLength: 254, format: 'mailstead-email' } as const;
const optionalText = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;
// A comma list in one string, or an array of addresses (each checked after splitting).
const addressList = { type: ['string', 'array', 'null'], maxLength: 100_000, maxItems: 1000, items: { type: 'string', maxLength: 998 } } as const;

/**
 * POST /v1/mail/inbound (SPEC.md "Email", DECISIONS.md section 7). Unknown fields are allowed by
 * the schema and dropped by the normaliser; optional fields may also be null (meaning absent).
 */
export const inboundBody = {
  type: 'object',
  required: ['message_id', 'from_email', 'to_email', 'subject', 'received_at'],
  properties: {
    message_id: { type: 'string', minLength: 1, maxLength: 998, pattern: '\\S' },
    from_email: address,
    to_email: address,
    subject: { type: 'string', maxLength: 10_000 },
    received_at: { type: 'string', format: 'iso-datetime' },
    from_name: optionalText(998),
    cc: addressList,
    bcc: addressList,
    body_text: optionalText(MAX_BODY_CHARS),
    body_html: optionalText(MAX_BODY_CHARS),
    headers: {
      type: ['object', 'null'],
      maxProperties: 500,
      propertyNames: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[!-9;-~]+$' },
      additionalProperties: {
        type: ['string', 'array'], maxLength: 100_000, maxItems: 100,
        items: { type: 'string', maxLength: 100_000 },
      },
    },
    attachments: {
      type: ['array', 'null'],
      maxItems: 100,
      items: {
        type: 'object',
        required: ['filename', 'content_type', 'content'],
        properties: {
          filename: { type: 'string', minLength: 1, maxLength: 255 },
          content_type: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+\\s*(;.*)?$' },
          content: { type: 'string' },
          content_id: optionalText(998),
          disposition: { enum: ['attachment', 'inline', null] },
        },
      },
    },
  },
} as const;

/** The inbound body after schema validation. */
export interface InboundBody {
  message_id: string;
  from_email: string;
  to_email: string;
  subject: string;
  received_at: string;
  from_name?: string | null;
  cc?: string | string[] | null;
  bcc?: string | string[] | null;
  body_text?: string | null;
  body_html?: string | null;
  headers?: Record<string, string | string[]> | null;
  attachments?: Array<{ filename: string; content_type: string; content: string; content_id?: string | null; disposition?: 'attachment' | 'inline' | null }> | null;
}
