import type { Db } from '../db/connection.js';
import { iso } from '../format.js';
import { queueExternalOfRecord } from './submissions.js';
import type { Envelope, Target } from '../inbound/message.js';
import { safeText } from '../inbound/safe-text.js';
import type { IngestStore } from './inbound-store.js';

/**
 * Messages ingest set aside (a dead-letter state): a queued message that could not be parsed or
 * stored in MAX_ATTEMPTS tries is marked `failed` with the last reason, its raw bytes (or API JSON)
 * kept, so the mail behind it flows on. Acknowledged mail is never dropped: an operator lists these
 * (`GET /v1/ingest/set-aside`, `mailstead set-aside list`), sends one through once more (retry) or
 * deletes it (discard). The same queries on both databases.
 */

/** Tries at a queued message (parse or store) before it is set aside. */
export const MAX_ATTEMPTS = 3;

/** How long a message whose try failed waits before the next one: 5 s, then 10 s. */
export const retryDelayMs = (attemptsBefore: number) => 5000 * 2 ** attemptsBefore;

/** What noting a failed try did: counted it (retry later), set the message aside, or nothing (no longer queued). */
export interface FailureNote {
  outcome: 'retry' | 'set-aside' | 'gone';
  /** Tries made so far. */
  attempts: number;
  /** Outbound items queued with it (a submission's external recipients, see setAside). */
  forwarded: number;
}

/** A set-aside message as the API and the CLI list it. */
export interface SetAsideMessage {
  id: number;
  kind: 'api' | 'smtp';
  received_at: string;
  set_aside_at: string | null;
  size: number;
  reason: string | null;
  attempts: number;
  recipients: string[];
}

/** A failure's reason as stored: short, and storable whatever an error message quoted (safe-text.ts). */
const reasonOf = (error: string) => safeText(error.slice(0, 500));

/**
 * Sets a queued message aside. A submission's external recipients ride on its record and need no
 * parse: they are queued now all the same (acknowledged mail leaves), and dropped from the record,
 * so a later retry does not send them twice. Returns the outbound items queued.
 */
export async function setAside(trx: Db, store: IngestStore, id: number, error: string, now: number): Promise<number> {
  const row = await trx.selectFrom('inbound').select(['kind', 'status', 'targets', 'message']).where('id', '=', id).executeTakeFirst();
  if (!row || row.status !== 'queued') return 0;
  const targets = JSON.parse(row.targets) as Target[];
  let queued = 0;
  if (row.kind === 'smtp' && targets.some((t) => t.external)) {
    const { mailFrom } = JSON.parse(row.message) as Envelope;
    for (const t of targets) {
      if (!t.external) continue;
      queued += await queueExternalOfRecord(trx, {
        inboundId: id, tenantId: t.tenantId, mailFrom: mailFrom ?? '', recipients: t.external.recipients, skip: t.external.skip, emailId: null,
      }, now);
    }
    await trx.updateTable('inbound').set({ targets: JSON.stringify(targets.filter((t) => !t.external)) }).where('id', '=', id).execute();
  }
  await store.fail(trx, id, reasonOf(error), now);
  return queued;
}

/** Counts a failed try at a queued message (inside a transaction of its own); the last allowed try sets it aside. */
export async function noteFailure(trx: Db, store: IngestStore, id: number, error: string, now: number): Promise<FailureNote> {
  const row = await trx.selectFrom('inbound').select(['status', 'attempts']).where('id', '=', id).executeTakeFirst();
  if (!row || row.status !== 'queued') return { outcome: 'gone', attempts: row?.attempts ?? 0, forwarded: 0 };
  const attempts = Number(row.attempts) + 1;
  if (attempts >= MAX_ATTEMPTS) return { outcome: 'set-aside', attempts, forwarded: await setAside(trx, store, id, error, now) };
  await store.bumpAttempts(trx, id, reasonOf(error));
  return { outcome: 'retry', attempts, forwarded: 0 };
}

/** Every address a queued message was for. */
function recipientsOf(targets: Target[]): string[] {
  return [...new Set(targets.flatMap((t) => (t.external ? t.external.recipients : [t.address])))];
}

/** The operator's side of set-aside messages (API and CLI). */
export const setAsideStore = {
  /** How many messages are set aside (the `/metrics` gauge). */
  count: (db: Db) =>
    db.selectFrom('inbound').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'failed')
      .executeTakeFirst().then((r) => Number(r?.n ?? 0)),

  /** The set-aside messages, oldest first (at most `limit`). */
  async list(db: Db, limit: number): Promise<SetAsideMessage[]> {
    const rows = await db.selectFrom('inbound').select(['id', 'kind', 'size', 'attempts', 'error', 'created_at', 'done_at', 'targets'])
      .where('status', '=', 'failed').orderBy('id').limit(limit).execute();
    return rows.map((r) => ({
      id: Number(r.id), kind: r.kind, received_at: iso(Number(r.created_at)), set_aside_at: r.done_at === null ? null : iso(Number(r.done_at)),
      size: Number(r.size), reason: r.error, attempts: Number(r.attempts), recipients: recipientsOf(JSON.parse(r.targets) as Target[]),
    }));
  },

  /**
   * Queues a set-aside message again for one more try (its attempts start at the last allowed, so
   * one more failure sets it aside again). False when no message of that id is set aside.
   */
  retry: (db: Db, id: number) =>
    db.updateTable('inbound').set({ status: 'queued', attempts: MAX_ATTEMPTS - 1, done_at: null })
      .where('id', '=', id).where('status', '=', 'failed').executeTakeFirst().then((r) => Number(r.numUpdatedRows) > 0),

  /**
   * Deletes a set-aside message and its bytes (in one transaction); API mail gives its mailboxes
   * back the quota it held since acceptance. Null when no message of that id is set aside, else the
   * raw file to remove once committed (SQLite mail kept outside its row).
   */
  async discard(trx: Db, store: IngestStore, id: number): Promise<{ rawPath: string | null } | null> {
    const row = await trx.selectFrom('inbound').select(['kind', 'size', 'targets', 'raw_path']).where('id', '=', id).where('status', '=', 'failed').executeTakeFirst();
    if (!row) return null;
    if (row.kind === 'api') {
      for (const t of JSON.parse(row.targets) as Target[]) for (const mailboxId of t.mailboxIds) await store.addUsedBytes(trx, mailboxId, -Number(row.size));
    }
    await trx.deleteFrom('inbound_reservations').where('inbound_id', '=', id).execute();
    await trx.deleteFrom('inbound').where('id', '=', id).execute();
    return { rawPath: row.raw_path };
  },
};
