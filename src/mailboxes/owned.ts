import type { Db } from '../db/connection.js';
import { notFound } from '../errors.js';
import type { ApiKey } from '../tenants/service.js';

/** Path {email} of a mailbox's own routes (import, export, Sieve, vacation): a mailbox address. */
export const mailboxParams = {
  type: 'object',
  required: ['email'],
  properties: { email: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' } },
} as const;
export interface MailboxParams { email: string }

/** The mailbox of the caller's tenant with this address, or 404 (another tenant's mailbox is not found either). */
export async function ownedMailbox(db: Db, key: ApiKey, address: string): Promise<{ id: number; address: string }> {
  const row = await db.selectFrom('mailboxes').select(['id', 'address'])
    .where('address', '=', address.toLowerCase()).where('tenant_id', '=', key.tenantId).executeTakeFirst();
  if (!row) throw notFound('Mailbox not found');
  return row;
}
