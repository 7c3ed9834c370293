import { idSchema } from '../http/validate.js';

const slots = { type: 'integer', minimum: 1, maximum: 100 } as const;
/** SPEC.md: "Quota fields are not accepted on create" (a quota would be silently dropped otherwise). */
const noQuotas = { domain_quota: false, quota: false, mailbox_quota: false, quota_mb: false } as const;

/** POST /v1/create/domain */
export const createDomainBody = {
  type: 'object',
  required: ['Domain'],
  properties: {
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: { type: 'object', properties: { total_mailbox_allowed: slots, ...noQuotas } },
    ...noQuotas,
  },
} as const;
export interface CreateDomainBody { Domain: string; Params?: { total_mailbox_allowed?: number } }

/** POST /v1/create/sub-domain */
export const createSubDomainBody = {
  type: 'object',
  required: ['Domain', 'Params'],
  properties: {
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['sub_domains'],
      properties: {
        sub_domains: {
          type: 'array', minItems: 1, maxItems: 10, uniqueItems: true,
          items: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$' },
        },
        total_mailbox_allowed: slots,
      },
    },
  },
} as const;
export interface CreateSubDomainBody { Domain: string; Params: { sub_domains: string[]; total_mailbox_allowed?: number } }

/** ?task_id= of every poll endpoint. */
export const taskQuery = {
  type: 'object',
  required: ['task_id'],
  properties: { task_id: idSchema },
} as const;
export interface TaskQuery { task_id: number }

/** POST /v1/domains/{domain}/check: the hostname in the path. */
export const domainPathParams = {
  type: 'object',
  required: ['domain'],
  properties: { domain: { type: 'string', format: 'mailstead-hostname' } },
} as const;
