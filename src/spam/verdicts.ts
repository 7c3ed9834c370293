import { sql, type Kysely } from 'kysely';
import type { SpamVerdict } from '../inbound/spam-verdict.js';

/** The verdict kept for a stored copy (migration 024's email_spam), or null when it was never classified. */
export async function verdictOfEmail(db: Kysely<any>, emailId: number): Promise<SpamVerdict | null> {
  const r = await sql<{ verdict: string }>`SELECT verdict FROM email_spam WHERE email_id = ${emailId}`.execute(db);
  return r.rows[0] ? JSON.parse(r.rows[0].verdict) as SpamVerdict : null;
}

/** Copies the verdict of a message to its copy (IMAP COPY): the copy's bytes carry the same trace header. */
export async function copyVerdict(db: Kysely<any>, fromId: number, toId: number): Promise<void> {
  await sql`INSERT INTO email_spam (email_id, verdict) SELECT ${toId}, verdict FROM email_spam WHERE email_id = ${fromId}`.execute(db);
}
