import { MAX_NAME_CHARS, MAX_SCRIPT_BYTES } from './store.js';

const email = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' } as const;
const name = { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS * 2, pattern: '^[^\\x00-\\x1f\\x7f]+$' } as const;

/** Path of /v1/mailboxes/{email}/sieve and /vacation. */
export const mailboxParams = { type: 'object', required: ['email'], properties: { email } } as const;
export interface MailboxParams { email: string }

/** Path of /v1/mailboxes/{email}/sieve/{name}. */
export const scriptParams = { type: 'object', required: ['email', 'name'], properties: { email, name } } as const;
export interface ScriptParams { email: string; name: string }

/** PUT /v1/mailboxes/{email}/sieve/{name} */
export const putScriptBody = {
  type: 'object',
  required: ['script'],
  additionalProperties: false,
  properties: {
    // Characters, not bytes: the store checks the byte limit and says so.
    script: { type: 'string', maxLength: MAX_SCRIPT_BYTES },
    active: { type: 'boolean' },
  },
} as const;
export interface PutScriptBody { script: string; active?: boolean }

/** An ISO date (YYYY-MM-DD) or date-time. */
const isoDate = { type: 'string', maxLength: 40, pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2}))?$' } as const;

/** PUT /v1/mailboxes/{email}/vacation */
export const vacationBody = {
  type: 'object',
  required: ['enabled', 'body'],
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    subject: { type: 'string', maxLength: 500 },
    body: { type: 'string', maxLength: 65536 },
    days: { type: 'integer', minimum: 1, maximum: 30 },
    start: { anyOf: [isoDate, { type: 'null' }] },
    end: { anyOf: [isoDate, { type: 'null' }] },
  },
} as const;
export interface VacationBody { enabled: boolean; subject?: string; body: string; days?: number; start?: string | null; end?: string | null }
