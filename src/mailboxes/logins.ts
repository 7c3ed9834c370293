import type { Db } from '../db/connection.js';
import { verifyPassword } from './passwords.js';

/** A mailbox a login opened. */
export interface MailboxLogin {
  mailboxId: number;
  tenantId: number;
  address: string;
}

// Compared against when the address is unknown, so a wrong address costs as much as a wrong password.
const DUMMY_HASH = '$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/** Mailbox logins (IMAP, later submission): the full address, case-insensitive, and the mailbox password. */
export function createMailboxLogins({ db }: { db: Db }) {
  return {
    /** The active mailbox the address and password open, or null. */
    async verify(address: string, password: string): Promise<MailboxLogin | null> {
      // No password holds NUL (IMAP's grammar and SASL PLAIN cannot carry one), and scrypt's HMAC pads
      // its key with zero bytes, so "pw\0" would open the mailbox of "pw".
      if (address.length > 320 || password.length > 1024 || password.includes('\0')) return null;
      const row = await db.selectFrom('mailboxes').select(['id', 'tenant_id', 'address', 'password_hash', 'status'])
        .where('address', '=', address.trim().toLowerCase()).executeTakeFirst();
      const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
      if (!row || !ok || row.status !== 'active') return null;
      return { mailboxId: row.id, tenantId: row.tenant_id, address: row.address };
    },
  };
}
export type MailboxLogins = ReturnType<typeof createMailboxLogins>;
