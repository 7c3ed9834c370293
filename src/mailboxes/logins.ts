import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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

/** How long a verified mailbox and password is remembered (Dovecot's auth_cache_ttl is an hour). */
export const LOGIN_CACHE_MS = 60_000;
/** Mailboxes remembered at most (the oldest go first). */
const MAX_CACHED = 10_000;

/** A login verified with scrypt: the stored hash it was checked against and a keyed digest of the password. */
interface Verified { hash: string; mac: Buffer; at: number }

/**
 * Mailbox logins (IMAP, submission): the full address, case-insensitive, and the mailbox password.
 *
 * A password is checked with scrypt (memory-hard, about 100 ms of a core), and a success is
 * remembered for LOGIN_CACHE_MS as an HMAC of the password under a key that lives only in this
 * process (the password itself is never kept): a client that logs in again (Thunderbird opens
 * several connections at once, webmail logs in for each request) is checked against that digest,
 * not hashed again. The mailbox row is still read at every login and the digest used only while the
 * row's password hash is the one it was made under and the mailbox is active, so a changed password,
 * a deletion or suspension applies at once, whichever node or process made it. A wrong password is
 * always hashed, so guessing costs what it did.
 */
export function createMailboxLogins({ db, now = () => performance.now() }: { db: Db; now?: () => number }) {
  const key = randomBytes(32);
  const verified = new Map<number, Verified>();
  let hashed = 0;
  const digest = (address: string, password: string) => createHmac('sha256', key).update(address).update('\0').update(password.normalize('NFC')).digest();

  return {
    /** The active mailbox the address and password open, or null. */
    async verify(address: string, password: string): Promise<MailboxLogin | null> {
      // No password holds NUL (IMAP's grammar and SASL PLAIN cannot carry one), and scrypt's HMAC pads
      // its key with zero bytes, so "pw\0" would open the mailbox of "pw".
      if (address.length > 320 || password.length > 1024 || password.includes('\0')) return null;
      const row = await db.selectFrom('mailboxes').select(['id', 'tenant_id', 'address', 'password_hash', 'status'])
        .where('address', '=', address.trim().toLowerCase()).executeTakeFirst();
      const login = row ? { mailboxId: row.id, tenantId: row.tenant_id, address: row.address } : null;
      const mac = row ? digest(row.address, password) : null;
      const hit = row ? verified.get(row.id) : undefined;
      if (row && hit && mac && hit.hash === row.password_hash && now() - hit.at < LOGIN_CACHE_MS && timingSafeEqual(hit.mac, mac)) {
        return row.status === 'active' ? login : null;
      }
      hashed++;
      const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
      if (!row || !ok || row.status !== 'active') return null;
      verified.delete(row.id); // re-inserted last: the map's order is oldest first
      if (verified.size >= MAX_CACHED) verified.delete(verified.keys().next().value!);
      verified.set(row.id, { hash: row.password_hash, mac: mac!, at: now() });
      return login;
    },
    /** Password checks that ran scrypt so far (a remembered login runs none). */
    get hashed(): number { return hashed; },
  };
}
export type MailboxLogins = ReturnType<typeof createMailboxLogins>;
