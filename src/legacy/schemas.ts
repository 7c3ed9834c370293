import { createDomainBody, createSubDomainBody, taskQuery, type CreateDomainBody, type CreateSubDomainBody } from '../domains/schemas.js';
import type { JsonSchema } from '../http/validate.js';
import { fullnameSchema, passwordSchema } from '../mailboxes/schemas.js';

/**
 * The request schemas of legacy variant B (DECISIONS.md section 11). Where variant B takes variant
 * A's body, the schema is variant A's plus the `key` field, so one rule validates both faces.
 */

/** The API key as variant B sends it (checked by the registry before the rest is validated). */
const keyField = { type: 'string', pattern: '^[A-Za-z0-9]{32}$', description: 'The API key (variant B sends it here, never in a header)' } as const;

/** The key owner's tenant id, required on list endpoints. */
const callerId = { type: 'integer', description: 'The key owner\'s user id (the tenant id that `mailstead tenant create` prints)' } as const;

/** A quota in MB; 0 (the default) is unlimited. Bounded so that the byte count stays an exact integer. */
const quotaMb = { type: 'integer', minimum: 0, maximum: 2_147_483_647, description: 'Mailbox quota in MB; 0 (the default) is unlimited' } as const;

/** Adds the `key` field to a variant A body schema. */
function withKey<S extends { required: readonly string[]; properties: Record<string, unknown> }>(schema: S): JsonSchema {
  return { ...schema, required: ['key', ...schema.required], properties: { key: keyField, ...schema.properties } };
}

/** POST /legacy/v1/create/domain: variant A's body plus `key`. */
export const legacyCreateDomainBody = withKey(createDomainBody);
export type LegacyCreateDomainBody = CreateDomainBody & { key: string };

/** POST /legacy/v1/create/sub-domain: variant A's body plus `key`. */
export const legacyCreateSubDomainBody = withKey(createSubDomainBody);
export type LegacyCreateSubDomainBody = CreateSubDomainBody & { key: string };

/** POST /legacy/v1/create/mailbox/single: `Email_fullname` is the local part. */
export const legacyCreateSingleBody = {
  type: 'object',
  required: ['key', 'Email_fullname', 'single_bulk', 'Domain', 'Params'],
  properties: {
    key: keyField,
    Email_fullname: { type: 'string', format: 'mailstead-local-part', description: 'The local part: the address is <Email_fullname>@<Domain>, lower-cased' },
    single_bulk: { type: 'string', const: 'single' },
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['password'],
      properties: { password: passwordSchema, display_name: { type: 'string', maxLength: 255 }, quota_mb: quotaMb },
    },
  },
} as const;
export interface LegacyCreateSingleBody {
  key: string; Email_fullname: string; single_bulk: 'single'; Domain: string;
  Params: { password: string | number; display_name?: string; quota_mb?: number };
}

/** POST /legacy/v1/create/mailbox/bulk: `count` instead of `mailbox_no`, and a quota. */
export const legacyCreateBulkBody = {
  type: 'object',
  required: ['key', 'Email_fullname', 'single_bulk', 'Domain', 'Params'],
  properties: {
    key: keyField,
    Email_fullname: fullnameSchema,
    single_bulk: { type: 'string', const: 'bulk' },
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['count', 'password'],
      properties: { count: { type: 'integer', minimum: 1, maximum: 100 }, password: passwordSchema, quota_mb: quotaMb },
    },
  },
} as const;
export interface LegacyCreateBulkBody {
  key: string; Email_fullname: string; single_bulk: 'bulk'; Domain: string;
  Params: { count: number; password: string | number; quota_mb?: number };
}

/** ?key=&task_id= of the mailbox polls. */
export const legacyTaskQuery = {
  type: 'object',
  required: ['key', ...taskQuery.required],
  properties: { key: keyField, ...taskQuery.properties },
} as const;
export interface LegacyTaskQuery { key: string; task_id: number }

/** ?key=&caller_id= of GET /legacy/v1/list/domain. */
export const legacyListDomainQuery = {
  type: 'object',
  required: ['key', 'caller_id'],
  properties: { key: keyField, caller_id: callerId },
} as const;
export interface LegacyListDomainQuery { key: string; caller_id: number }

/** ?key=&caller_id=&domain= of GET /legacy/v1/list/mailbox (`include_credentials` is accepted and ignored). */
export const legacyListMailboxQuery = {
  type: 'object',
  required: ['key', 'caller_id', 'domain'],
  properties: {
    key: keyField, caller_id: callerId, domain: { type: 'string', format: 'mailstead-hostname' },
    include_credentials: { type: 'string', description: 'Ignored: variant B always answers imap_credentials null' },
  },
} as const;
export interface LegacyListMailboxQuery { key: string; caller_id: number; domain: string }

/** ?key=&caller_id=&domain= of GET /legacy/v1/list/alias. */
export const legacyListAliasQuery = {
  type: 'object',
  required: ['key', 'caller_id', 'domain'],
  properties: { key: keyField, caller_id: callerId, domain: { type: 'string', format: 'mailstead-hostname' } },
} as const;
export type LegacyListAliasQuery = LegacyListMailboxQuery;
