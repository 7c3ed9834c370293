import { idSchema } from '../http/validate.js';

/** POST /v1/spam/lists */
export const listEntryBody = {
  type: 'object',
  required: ['kind', 'pattern'],
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['allow', 'block'] },
    pattern: { type: 'string', minLength: 2, maxLength: 320, description: 'user@domain, or @domain (that domain and its sub-domains), matched against the From address' },
    mailbox: { type: 'string', minLength: 3, maxLength: 320, description: 'A mailbox address of the account; omitted: the whole account' },
  },
} as const;
export interface ListEntryBody { kind: 'allow' | 'block'; pattern: string; mailbox?: string }

/** Path {id} of DELETE /v1/spam/lists/{id} */
export const listEntryParams = { type: 'object', required: ['id'], properties: { id: idSchema } } as const;
export interface ListEntryParams { id: number }
