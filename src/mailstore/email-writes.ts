import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { chosenOnce, type Backend } from '../db/backend.js';
import { postgresEmailWrites } from './postgres/email-writes.js';
import { sqliteEmailWrites } from './sqlite/email-writes.js';
import type { EmailWrites, NewEmailRow } from './ports.js';
import type { AttachmentsTable, EmailContentsTable, EmailImapTable, EmailsFtsTable } from '../db/tables/emails.js';

/**
 * The queries of stored email that the writer runs: the writing ones that differ between the
 * backends (`EmailWrites`), chosen once from `backend`, and those both share. Without a backend the
 * choice is made from the first handle a writing query is given (db/backend.ts `chosenOnce`).
 */
export function createEmailWrites(backend?: Backend) {
  const writes = chosenOnce<EmailWrites>({ sqlite: sqliteEmailWrites, postgres: postgresEmailWrites }, backend);
  return {
    nextEmailId: (db: Db) => writes(db).nextEmailId(db),
    insertEmails: (db: Db, rows: NewEmailRow[]) => writes(db).insertEmails(db, rows),
    insertContents: (db: Db, rows: Insertable<EmailContentsTable>[]) => writes(db).insertContents(db, rows),
    insertAttachments: (db: Db, rows: Insertable<AttachmentsTable>[]) => writes(db).insertAttachments(db, rows),
    saveImap: (db: Db, rows: EmailImapTable[]) => writes(db).saveImap(db, rows),
    indexFts: (db: Db, rows: EmailsFtsTable[]) => writes(db).indexFts(db, rows),
    releaseBytes: (db: Db, mailboxId: number, size: number) => writes(db).releaseBytes(db, mailboxId, size),
    tombstone: (db: Db, ids: number[], now: number, nextMarker: () => number) => writes(db).tombstone(db, ids, now, nextMarker),

    /** The running received_at maximum of tenants. */
    searchState: (db: Db, tenantIds: number[]) =>
      db.selectFrom('email_search_state').select(['tenant_id', 'received_max']).where('tenant_id', 'in', tenantIds).execute()
        .then((rows) => new Map(rows.map((r) => [r.tenant_id, r.received_max]))),

    saveSearchState: (db: Db, tenantId: number, receivedMax: number) =>
      db.insertInto('email_search_state').values({ tenant_id: tenantId, received_max: receivedMax })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ received_max: receivedMax })).execute(),

    /** The largest update marker stored. */
    maxMarker: (db: Db) =>
      db.selectFrom('emails').select((eb) => eb.fn.max('updated_seq').as('m')).executeTakeFirst().then((r) => Number(r?.m ?? 0)),
  };
}
export type EmailRowWrites = ReturnType<typeof createEmailWrites>;
