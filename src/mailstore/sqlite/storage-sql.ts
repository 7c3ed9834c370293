import { sql } from 'kysely';
import { DEFAULT_FOLDERS } from '../../db/migrations/010_folders.js';
import type { StorageSql } from '../ports.js';

/** Mail storage's statements on SQLite: lists travel as JSON and json_each unpacks them. */
export const sqliteStorageSql: StorageSql = {
  async ensureDefaults(db, mailboxIds, now) {
    const values = JSON.stringify(mailboxIds.flatMap((m) => DEFAULT_FOLDERS.map(([name, use]) => [m, name, use])));
    await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at)
      SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, ${now} FROM json_each(${values}) AS j WHERE true
      ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(db);
  },

  async ensureDefaultsByAddress(db, addresses, now) {
    const folders = JSON.stringify(DEFAULT_FOLDERS);
    await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at)
      SELECT m.id, f.value ->> 0, f.value ->> 1, ${now} FROM mailboxes AS m, json_each(${folders}) AS f
      WHERE m.address IN (SELECT value FROM json_each(${JSON.stringify(addresses)}))
      ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(db);
  },

  async reserveUids(db, folder, counts) {
    const pairs = JSON.stringify([...counts]);
    const r = await sql<{ mailbox_id: number; uidnext: number }>`UPDATE folders SET uidnext = folders.uidnext + (j.value ->> 1)
      FROM json_each(${pairs}) AS j WHERE folders.mailbox_id = (j.value ->> 0) AND folders.name = ${folder}
      RETURNING mailbox_id, uidnext`.execute(db);
    return new Map(r.rows.map((x) => [Number(x.mailbox_id), Number(x.uidnext) - counts.get(Number(x.mailbox_id))!]));
  },

  async copyInboundBytes(trx, emailId, inboundId, skip, prefix) {
    // SQLite's || yields text; the cast gives back the same bytes as a blob.
    const bytes = prefix.length > 0 ? sql`CAST(${prefix} || substr(raw, ${skip + 1}) AS BLOB)` : sql`substr(raw, ${skip + 1})`;
    await sql`INSERT INTO email_raw (email_id, raw) SELECT ${emailId}, ${bytes} FROM inbound WHERE id = ${inboundId}`.execute(trx);
  },

  // One process writes a SQLite database: its cell is the truth.
  markerRow: null,
};
