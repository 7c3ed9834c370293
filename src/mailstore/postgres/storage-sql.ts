import { sql } from 'kysely';
import { DEFAULT_FOLDERS } from '../../db/migrations/010_folders.js';
import type { StorageSql } from '../ports.js';

const folderNames = DEFAULT_FOLDERS.map((f) => f[0]);
const folderUses = DEFAULT_FOLDERS.map((f) => f[1]);

/** Mail storage's statements on PostgreSQL: lists travel as typed arrays and unnest unpacks them. */
export const postgresStorageSql: StorageSql = {
  async ensureDefaults(db, mailboxIds, now) {
    await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at)
      SELECT m.id, f.name, f.special_use, ${now}::bigint FROM unnest(${mailboxIds}::bigint[]) AS m(id),
        unnest(${folderNames}::text[], ${folderUses}::text[]) AS f(name, special_use)
      ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(db);
  },

  async ensureDefaultsByAddress(db, addresses, now) {
    await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at)
      SELECT m.id, f.name, f.special_use, ${now}::bigint FROM mailboxes AS m,
        unnest(${folderNames}::text[], ${folderUses}::text[]) AS f(name, special_use)
      WHERE m.address = ANY(${addresses}::text[])
      ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(db);
  },

  async reserveUids(db, folder, counts) {
    const r = await sql<{ mailbox_id: number; uidnext: number }>`UPDATE folders SET uidnext = folders.uidnext + c.n
      FROM unnest(${[...counts.keys()]}::bigint[], ${[...counts.values()]}::bigint[]) AS c(mailbox_id, n)
      WHERE folders.mailbox_id = c.mailbox_id AND folders.name = ${folder}
      RETURNING folders.mailbox_id, folders.uidnext`.execute(db);
    return new Map(r.rows.map((x) => [Number(x.mailbox_id), Number(x.uidnext) - counts.get(Number(x.mailbox_id))!]));
  },

  async copyInboundBytes(trx, emailId, inboundId, skip, prefix) {
    // Typed: `substring(bytea from text)` would be taken for the regular-expression form.
    const tail = sql`substring(raw from ${skip + 1}::integer)`;
    const bytes = prefix.length > 0 ? sql`${prefix}::bytea || ${tail}` : tail;
    await sql`INSERT INTO email_raw (email_id, raw) SELECT ${emailId}, ${bytes} FROM inbound WHERE id = ${inboundId}`.execute(trx);
  },

  // Nodes sharing the database take markers in commit order through the locked row.
  markerRow: {
    async lock(trx) {
      const r = await sql<{ value: number }>`SELECT value FROM email_marker WHERE id = 1 FOR UPDATE`.execute(trx);
      return Number(r.rows[0]?.value ?? 0);
    },
    async raise(trx, value) {
      await sql`UPDATE email_marker SET value = greatest(value, ${value}::bigint) WHERE id = 1`.execute(trx);
    },
  },
};
