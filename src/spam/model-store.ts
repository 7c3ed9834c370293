import { sql, type Kysely } from 'kysely';
import { backendOf } from '../db/backend.js';
import type { Counts } from './chi2.js';

/** A model's training totals and its version (raised by every training that changes it: migration 028). */
export interface ModelTotals extends Counts { version: number }

/** The tenant-wide model's mailbox id (mailbox models use the mailbox's own). */
export const TENANT_MODEL = 0;

/** Tokens per statement (each list is one parameter, so this bounds statement size, not a parameter limit). */
const CHUNK = 5000;

/** A list of integers as one parameter (db/dml.ts). */
const intList = (db: Kysely<any>, values: readonly number[]) => backendOf(db).dml.list(values);

/** The token counts and training totals of the builtin filter's models (tables of migration 024). */
export const spamModelStore = {
  /** Messages trained per model of a tenant (its mailboxes' among `mailboxIds`, and the tenant's), with each model's version. */
  async totals(db: Kysely<any>, tenantId: number, mailboxIds: number[]): Promise<Map<number, ModelTotals>> {
    const rows = await sql<{ mailbox_id: number; spam: number; ham: number; version: number }>`SELECT mailbox_id, spam, ham, version FROM spam_totals
      WHERE tenant_id = ${tenantId} AND mailbox_id IN ${intList(db, [TENANT_MODEL, ...mailboxIds])}`.execute(db);
    return new Map(rows.rows.map((r) => [Number(r.mailbox_id), { spam: Number(r.spam), ham: Number(r.ham), version: Number(r.version) }]));
  },

  /** The counts of the known tokens among `tokens` in one model (one statement for any number). */
  async counts(db: Kysely<any>, tenantId: number, model: number, tokens: readonly number[]): Promise<Map<number, Counts>> {
    if (tokens.length === 0) return new Map();
    const rows = await sql<{ token: number; spam: number; ham: number }>`SELECT token, spam, ham FROM spam_tokens
      WHERE tenant_id = ${tenantId} AND mailbox_id = ${model} AND token IN ${intList(db, tokens)}`.execute(db);
    return new Map(rows.rows.map((r) => [Number(r.token), { spam: Number(r.spam), ham: Number(r.ham) }]));
  },

  /**
   * Adds many messages' token deltas to a model at once (a move of 200 messages is one pass, not
   * 200): `deltas` maps a token to its spam and ham change (negative takes an earlier contribution
   * away; counts never go below 0), `spam` and `ham` are the change of the model's totals. One upsert
   * a chunk, the delta as the proposed row: a negative one only ever meets a row that its earlier
   * contribution made, and the rare token without one is clamped to 0 after.
   */
  async addDeltas(db: Kysely<any>, tenantId: number, model: number, deltas: Map<number, [number, number]>, spam: number, ham: number): Promise<void> {
    const { dml } = backendOf(db);
    const all = [...deltas];
    for (let i = 0; i < all.length; i += CHUNK) {
      const part = all.slice(i, i + CHUNK);
      // `WHERE true`: SQLite reads ON CONFLICT after a bare FROM as a join constraint otherwise.
      await sql`INSERT INTO spam_tokens (tenant_id, mailbox_id, token, spam, ham)
        SELECT CAST(${tenantId} AS BIGINT), CAST(${model} AS BIGINT), d.c0, d.c1, d.c2 FROM ${dml.intRows(part.map(([t, d]) => [t, d[0], d[1]]), 3)} AS d WHERE true
        ON CONFLICT (tenant_id, mailbox_id, token) DO UPDATE SET
          spam = ${dml.greatest(0, sql`spam_tokens.spam + excluded.spam`)}, ham = ${dml.greatest(0, sql`spam_tokens.ham + excluded.ham`)}`.execute(db);
      const taken = part.filter(([, [s, h]]) => s < 0 || h < 0).map(([t]) => t);
      if (taken.length > 0) {
        await sql`UPDATE spam_tokens SET spam = ${dml.greatest(0, sql`spam`)}, ham = ${dml.greatest(0, sql`ham`)}
          WHERE tenant_id = ${tenantId} AND mailbox_id = ${model} AND token IN ${intList(db, taken)} AND (spam < 0 OR ham < 0)`.execute(db);
      }
    }
    await sql`INSERT INTO spam_totals (tenant_id, mailbox_id, spam, ham, version) VALUES (${tenantId}, ${model}, ${Math.max(spam, 0)}, ${Math.max(ham, 0)}, 1)
      ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET
        spam = ${dml.greatest(0, sql`spam_totals.spam + ${spam}`)}, ham = ${dml.greatest(0, sql`spam_totals.ham + ${ham}`)},
        version = spam_totals.version + 1`.execute(db);
  },

  /**
   * Forgets the own models of mailboxes being deleted (what they taught their tenant's model
   * stays). The totals row stays, emptied, with its version raised: SQLite may give a later
   * mailbox the same id, and its model must start empty and never match counts a classifying
   * thread kept for the old one at the same version (token-cache.ts).
   */
  async forgetMailboxes(db: Kysely<any>, mailboxIds: readonly number[]): Promise<void> {
    if (mailboxIds.length === 0) return;
    // spam_totals has one row per model: read by mailbox whole; spam_tokens then by its key's prefix.
    const models = await sql<{ tenant_id: number; mailbox_id: number }>`SELECT tenant_id, mailbox_id FROM spam_totals
      WHERE mailbox_id IN ${intList(db, mailboxIds.filter((id) => id !== TENANT_MODEL))}`.execute(db);
    for (const m of models.rows) {
      await sql`DELETE FROM spam_tokens WHERE tenant_id = ${m.tenant_id} AND mailbox_id = ${m.mailbox_id}`.execute(db);
      await sql`UPDATE spam_totals SET spam = 0, ham = 0, version = version + 1 WHERE tenant_id = ${m.tenant_id} AND mailbox_id = ${m.mailbox_id}`.execute(db);
    }
  },

  /** What each of `messageIds` contributed to a mailbox's models so far ('spam' or 'ham'; absent: nothing). */
  async trainedAsMany(db: Kysely<any>, mailboxId: number, messageIds: string[]): Promise<Map<string, 'spam' | 'ham'>> {
    if (messageIds.length === 0) return new Map();
    const r = await sql<{ message_id: string; class: string }>`SELECT message_id, class FROM spam_trained
      WHERE mailbox_id = ${mailboxId} AND message_id IN (${sql.join(messageIds)})`.execute(db);
    return new Map(r.rows.map((x) => [x.message_id, x.class as 'spam' | 'ham']));
  },

  /** What a message contributed to its mailbox's models so far: 'spam', 'ham', or null. */
  trainedAs: (db: Kysely<any>, mailboxId: number, messageId: string) =>
    sql<{ class: string }>`SELECT class FROM spam_trained WHERE mailbox_id = ${mailboxId} AND message_id = ${messageId}`.execute(db)
      .then((r) => (r.rows[0]?.class as 'spam' | 'ham' | undefined) ?? null),

  /** Records what a message contributes now. */
  saveTrained: (db: Kysely<any>, row: { mailboxId: number; messageId: string; tenantId: number; cls: 'spam' | 'ham'; at: number }) =>
    sql`INSERT INTO spam_trained (mailbox_id, message_id, tenant_id, class, trained_at)
      VALUES (${row.mailboxId}, ${row.messageId}, ${row.tenantId}, ${row.cls}, ${row.at})
      ON CONFLICT (mailbox_id, message_id) DO UPDATE SET class = ${row.cls}, trained_at = ${row.at}`.execute(db).then(() => undefined),
};
