import { queryBoolean } from '../http/validate.js';

/** A mailbox password in a create request (shared with the legacy variant). */
export const passwordSchema = {
  type: ['string', 'integer'],
  description: 'A string of at least 8 characters, or the integer 0 for a generated 24-character password',
} as const;
/** A display name from which bulk local parts are derived (shared with the legacy variant). */
export const fullnameSchema = { type: 'string', minLength: 1, maxLength: 255 } as const;

/** POST /v1/create/mailbox/single */
export const createSingleBody = {
  type: 'object',
  required: ['Email_fullname', 'single_bulk', 'Domain', 'Params'],
  properties: {
    Email_fullname: fullnameSchema,
    single_bulk: { type: 'string', const: 'single' },
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['email_id', 'password'],
      properties: { email_id: { type: 'string', format: 'mailstead-email' }, password: passwordSchema },
    },
  },
} as const;
export interface CreateSingleBody {
  Email_fullname: string; single_bulk: 'single'; Domain: string; Params: { email_id: string; password: string | number };
}

/** POST /v1/create/mailbox/bulk */
export const createBulkBody = {
  type: 'object',
  required: ['Email_fullname', 'single_bulk', 'Domain', 'Params'],
  properties: {
    Email_fullname: fullnameSchema,
    single_bulk: { type: 'string', const: 'bulk' },
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['mailbox_no', 'password'],
      properties: { mailbox_no: { type: 'integer', minimum: 1, maximum: 100 }, password: passwordSchema },
    },
  },
} as const;
export interface CreateBulkBody {
  Email_fullname: string; single_bulk: 'bulk'; Domain: string; Params: { mailbox_no: number; password: string | number };
}

/** GET /v1/list/mailbox */
export const listMailboxQuery = {
  type: 'object',
  required: ['domain'],
  properties: { domain: { type: 'string', format: 'mailstead-hostname' }, include_credentials: queryBoolean },
} as const;
export interface ListMailboxQuery { domain: string; include_credentials?: string }

/** POST /v1/delete/mailbox/bulk */
export const deleteMailboxesBody = {
  type: 'object',
  required: ['Mailboxes'],
  properties: {
    Mailboxes: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', format: 'mailstead-email' } },
  },
} as const;
export interface DeleteMailboxesBody { Mailboxes: string[] }

/** POST /v1/delete/domain/bulk */
export const deleteDomainsBody = {
  type: 'object',
  required: ['Domains'],
  properties: {
    Domains: { type: 'array', minItems: 1, maxItems: 10, uniqueItems: true, items: { type: 'string', format: 'mailstead-hostname' } },
  },
} as const;
export interface DeleteDomainsBody { Domains: string[] }
