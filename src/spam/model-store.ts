import { sql, type Kysely } from 'kysely';
import { backendOf } from '../db/backend.js';
import type { Counts } from './chi2.js';

/** The tenant-wide model's mailbox id (mailbox models use the mailbox's own). */
export const TENANT_MODEL = 0;

/** Rows per multi-row upsert (5 parameters each, under SQLite's and PostgreSQL's limits). */
const CHUNK = 1000;

const pg = (db: Kysely<any>) => backendOf(db).kind === 'postgres';

/** A list of integers as one parameter: SQLite unpacks JSON, PostgreSQL an array. */
const intList = (db: Kysely<any>, values: readonly number[]) =>
  (pg(db) ? sql`(SELECT unnest(${values}::bigint[]))` : sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`);

/** The token counts and training totals of the builtin filter's models (tables of migration 024). */
export const spamModelStore = {
  /** Messages trained per model of a tenant: its mailboxes' among `mailboxIds`, and the tenant's. */
  async totals(db: Kysely<any>, tenantId: number, mailboxIds: number[]): Promise<Map<number, Counts>> {
    const rows = await sql<{ mailbox_id: number; spam: number; ham: number }>`SELECT mailbox_id, spam, ham FROM spam_totals
      WHERE tenant_id = ${tenantId} AND mailbox_id IN ${intList(db, [TENANT_MODEL, ...mailboxIds])}`.execute(db);
    return new Map(rows.rows.map((r) => [Number(r.mailbox_id), { spam: Number(r.spam), ham: Number(r.ham) }]));
  },

  /** The counts of the known tokens among `tokens` in one model (one statement for any number). */
  async counts(db: Kysely<any>, tenantId: number, model: number, tokens: readonly number[]): Promise<Map<number, Counts>> {
    if (tokens.length === 0) return new Map();
    const rows = await sql<{ token: number; spam: number; ham: number }>`SELECT token, spam, ham FROM spam_tokens
      WHERE tenant_id = ${tenantId} AND mailbox_id = ${model} AND token IN ${intList(db, tokens)}`.execute(db);
    return new Map(rows.rows.map((r) => [Number(r.token), { spam: Number(r.spam), ham: Number(r.ham) }]));
  },

  /**
   * Adds a message's tokens to a model (negative deltas take an earlier contribution away; counts
   * never go below 0), and the message to its totals.
   */
  async add(db: Kysely<any>, tenantId: number, model: number, tokens: readonly number[], spam: number, ham: number): Promise<void> {
    const greatest = pg(db) ? 'GREATEST' : 'max';
    for (let i = 0; i < tokens.length; i += CHUNK) {
      const part = tokens.slice(i, i + CHUNK);
      const source = pg(db)
        ? sql`SELECT ${tenantId}::bigint, ${model}::bigint, t, ${Math.max(spam, 0)}::bigint, ${Math.max(ham, 0)}::bigint FROM unnest(${part}::bigint[]) AS t`
        : sql`SELECT ${tenantId}, ${model}, value, ${Math.max(spam, 0)}, ${Math.max(ham, 0)} FROM json_each(${JSON.stringify(part)}) WHERE true`;
      await sql`INSERT INTO spam_tokens (tenant_id, mailbox_id, token, spam, ham) ${source}
        ON CONFLICT (tenant_id, mailbox_id, token) DO UPDATE SET
          spam = ${sql.raw(greatest)}(0, spam_tokens.spam + ${spam}), ham = ${sql.raw(greatest)}(0, spam_tokens.ham + ${ham})`.execute(db);
    }
    await sql`INSERT INTO spam_totals (tenant_id, mailbox_id, spam, ham) VALUES (${tenantId}, ${model}, ${Math.max(spam, 0)}, ${Math.max(ham, 0)})
      ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET
        spam = ${sql.raw(greatest)}(0, spam_totals.spam + ${spam}), ham = ${sql.raw(greatest)}(0, spam_totals.ham + ${ham})`.execute(db);
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
