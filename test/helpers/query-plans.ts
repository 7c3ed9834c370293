import type { ExecutionContext } from 'ava';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { openPostgresDatabase, pgPoolOf } from '../../src/db/postgres.js';
import type { Database } from '../../src/db/schema.js';
import type { Reader } from '../../src/db/read-connection.js';
import { backendOf } from '../../src/db/backend.js';
import { folderStore } from '../../src/mailstore/folder-store.js';
import { tempDir } from './app.js';
import { freshPostgresDatabase, onPostgres } from './pg.js';

/*
 * What the query-plan tests need: a database of the lane's kind seeded with a store large enough
 * for the planner to choose as it does in production (by SQL, in seconds; analysed on PostgreSQL), handles
 * that record the SQL the product's own code runs (its Kysely queries, the prepared statements of
 * the read paths, the raw text of the PostgreSQL claims), and the plan of each recorded statement.
 */

/** One statement the code ran: its text and parameters. */
export interface Ran {
  sql: string;
  parameters: readonly unknown[];
}

/** The rows the seeded store holds. */
export const SEED = {
  /** Delivered mail of the one large mailbox (tenant 1, mailbox BIG). */
  bigMailbox: 40_000,
  /** Mail of each of the other mailboxes (two more of tenant 1, two of tenant 2). */
  otherMailbox: 4_000,
  /** SMTP rows of the inbound queue kept after storing (they hold the raw bytes of stored mail). */
  storedInbound: 30_000,
  /** Reservations of message_ids of accepted API mail not yet stored (a backlog). */
  reservations: 20_000,
  /** Sent items of the outbound queue. */
  sentOutbound: 20_000,
} as const;

/** The seeded database, and the ids the tests name. */
export interface Seeded {
  db: Db;
  dialect: 'sqlite' | 'postgres';
  /** SQLite: the connection itself (the read paths' prepared statements run on it). */
  sqlite?: import('better-sqlite3').Database;
  /** PostgreSQL: the pool under `db`. */
  pool?: pg.Pool;
  tenantId: number;
  bigMailbox: number;
  otherMailbox: number;
  /** The newest email id of the big mailbox, a message_id stored there, and the newest change marker. */
  newestId: number;
  storedMessageId: string;
  newestMarker: number;
  /** Every statement run through `recording` handles since the last `take()`. */
  take(): Ran[];
  /** A Kysely handle on the same connection that records every statement it runs. */
  recording: Db;
  /** SQLite: a reader (src/db/read-connection.ts) on the same connection that records the statements it prepares. */
  recordingReader?: Reader;
  /** PostgreSQL: the pool, recording every query it is given. */
  recordingPool?: pg.Pool;
  /** The plan of a statement, one line per step. */
  plan(ran: Ran): Promise<string[]>;
}

const T0 = Date.UTC(2024, 0, 1);
/** Markers the seeded rows carry: small numbers, below anything markers.ts hands out now. */
const MARKER_STEP = 16;

const RECORDING = Symbol('recording');

/** Has every connection of `pool` (those open and those to come) tell `record` the statements it runs. */
function recordConnections(pool: pg.Pool, record: (text: string, parameters: readonly unknown[]) => void): void {
  const wrap = (client: pg.PoolClient) => {
    const c = client as pg.PoolClient & { [RECORDING]?: true };
    if (!c[RECORDING]) {
      const query = c.query.bind(c) as (...args: unknown[]) => unknown;
      c.query = ((q: string | pg.QueryConfig, ...rest: unknown[]) => {
        const text = typeof q === 'string' ? q : q.text;
        const values = Array.isArray(rest[0]) ? rest[0] : typeof q === 'string' ? [] : q.values ?? [];
        record(text, values as unknown[]);
        return query(q, ...rest);
      }) as typeof c.query;
      c[RECORDING] = true;
    }
    return client;
  };
  const connect = pool.connect.bind(pool) as (cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: unknown) => void) => Promise<pg.PoolClient> | void;
  pool.connect = ((cb?: (err: Error | undefined, client: pg.PoolClient | undefined, done: unknown) => void) => (cb
    ? connect((err, client, done) => cb(err, client && wrap(client), done))
    : (connect() as Promise<pg.PoolClient>).then(wrap))) as typeof pool.connect;
}

/** Opens a fresh database of the lane's kind and seeds it (PostgreSQL: and analyses it). */
export async function seededDatabase(t: ExecutionContext): Promise<Seeded> {
  let db: Db;
  let sqlite: Seeded['sqlite'];
  let pool: pg.Pool | undefined;
  let close: () => Promise<void>;
  if (onPostgres) {
    const database = await openPostgresDatabase(await freshPostgresDatabase(t));
    db = database.db;
    pool = pgPoolOf(db).pool;
    close = () => database.close();
  } else {
    const database = await openDatabase(tempDir(t));
    db = database.db;
    sqlite = database.sqlite;
    close = () => database.close();
  }
  t.teardown(close);
  await seed(db);
  const ran: Ran[] = [];
  const log = (event: { level: string; query: { sql: string; parameters: readonly unknown[] } }) => {
    if (event.level === 'query') ran.push({ sql: event.query.sql, parameters: event.query.parameters });
  };
  const big = await sql<{ id: number; message_id: string; m: number }>`SELECT id, message_id, updated_seq AS m FROM emails
    WHERE mailbox_id = 1 ORDER BY id DESC LIMIT 1`.execute(db);
  const base = {
    db, tenantId: 1, bigMailbox: 1, otherMailbox: 2,
    newestId: Number(big.rows[0].id), storedMessageId: big.rows[0].message_id, newestMarker: Number(big.rows[0].m),
    take: () => ran.splice(0, ran.length),
  };
  if (pool) {
    // A second handle on the same database whose connections record what they are given: the
    // product's pool reads and its Kysely handle (registered, so code that asks for the pool under
    // it finds this one) both go through them.
    const rec = await openPostgresDatabase(pgPoolOf(db).url);
    t.teardown(() => rec.close());
    recordConnections(rec.pool, (text, parameters) => ran.push({ sql: text, parameters }));
    return {
      ...base, dialect: 'postgres', pool, recording: rec.db, recordingPool: rec.pool,
      async plan(r) {
        const res = await pool!.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${r.sql}`, [...r.parameters]);
        return res.rows.map((x) => x['QUERY PLAN']);
      },
    };
  }
  const conn = sqlite!;
  const recording = new Kysely<Database>({ dialect: new SqliteDialect({ database: conn }), log });
  const recordingReader: Reader = {
    prepare(text: string, raw?: boolean) {
      const st = conn.prepare(text);
      const wrap = (fn: 'all' | 'get') => (...params: unknown[]) => {
        ran.push({ sql: text, parameters: params.length === 1 && Array.isArray(params[0]) ? params[0] : params });
        return (raw ? st.raw(true) : st)[fn](...params);
      };
      return { all: wrap('all'), get: wrap('get') } as unknown as ReturnType<Reader['prepare']>;
    },
    exec: (text: string) => { conn.exec(text); },
    snapshot: <T>(fn: () => T) => fn(),
    close: () => undefined,
  };
  return {
    ...base, dialect: 'sqlite', sqlite: conn, recording, recordingReader,
    async plan(r) {
      const rows = conn.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p))) as Array<{ detail: string }>;
      return rows.map((x) => x.detail);
    },
  };
}

/**
 * The store: two tenants; tenant 1 has mailbox 1 (SEED.bigMailbox delivered messages in INBOX,
 * a few hundred filed in Sent) and mailboxes 2 and 3; tenant 2 has 4 and 5; every email has its
 * contents and IMAP summary; a stored-rows backlog of the inbound queue and a sent outbound queue
 * with a few items queued, submission counts. One SQL text for both databases where it can be.
 */
async function seed(db: Db): Promise<void> {
  await sql`INSERT INTO tenants (id, name, plan_active, is_admin, created_at) VALUES (1, 'big', 1, 0, ${sql.lit(T0)}), (2, 'other', 1, 0, ${sql.lit(T0)})`.execute(db);
  await sql`INSERT INTO domains (id, tenant_id, hostname, parent_id, domain_type, total_mailbox_allowed, verification_token, created_at)
    VALUES (1, 1, 'big.example', NULL, 'root', 100, ${'0'.repeat(32)}, ${sql.lit(T0)}), (2, 2, 'other.example', NULL, 'root', 100, ${'1'.repeat(32)}, ${sql.lit(T0)})`.execute(db);
  for (const [id, tenant, domain, address] of [[1, 1, 1, 'big@big.example'], [2, 1, 1, 'two@big.example'], [3, 1, 1, 'three@big.example'], [4, 2, 2, 'four@other.example'], [5, 2, 2, 'five@other.example']] as const) {
    await sql`INSERT INTO mailboxes (id, tenant_id, domain_id, address, display_name, password_hash, quota_mb, created_at)
      VALUES (${id}, ${tenant}, ${domain}, ${address}, '', 'x', 0, ${sql.lit(T0)})`.execute(db);
  }
  await folderStore.ensureDefaults(db, [1, 2, 3, 4, 5], T0);
  const total = SEED.bigMailbox + 4 * SEED.otherMailbox;
  // Row i: mailbox 1 for the first bigMailbox rows, then mailboxes 2-5 in turn; one in 100 of
  // mailbox 1's filed in Sent (imported = 1, a message_id repeated from INBOX, as IMAP APPEND may);
  // a third read; one in 50 deleted (a tombstone); a change marker in row order.
  const box = sql`CASE WHEN i <= ${sql.lit(SEED.bigMailbox)} THEN 1 ELSE 2 + (i % 4) END`;
  const sent = sql`(i <= ${sql.lit(SEED.bigMailbox)} AND i % 100 = 0)`;
  await sql`WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ${sql.lit(total)})
    INSERT INTO emails (id, tenant_id, mailbox_id, message_id, from_email, from_name, to_email, subject, snippet, received_at, received_max,
      size, has_attachments, read_at, deleted_at, updated_seq, created_at, folder, uid, flags, imported)
    SELECT i, CASE WHEN ${box} <= 3 THEN 1 ELSE 2 END, ${box},
      '<m' || (CASE WHEN ${sent} THEN i - 1 ELSE i END) || '@seed.example>', 'sender' || (i % 97) || '@remote.example', NULL, 'to@big.example',
      'subject ' || i, 'snippet', ${sql.lit(T0)} + i * 60000, ${sql.lit(T0)} + i * 60000, 5000, 0,
      CASE WHEN i % 3 = 0 THEN ${sql.lit(T0)} ELSE NULL END, CASE WHEN i % 50 = 0 THEN ${sql.lit(T0)} ELSE NULL END, i * ${sql.lit(MARKER_STEP)}, ${sql.lit(T0)},
      CASE WHEN ${sent} THEN 'Sent' ELSE 'INBOX' END, i, '', CASE WHEN ${sent} THEN 1 ELSE 0 END
    FROM n`.execute(db);
  await sql`INSERT INTO email_contents (email_id, inbound_id, cc, bcc, headers, auth, body_text, body_html)
    SELECT id, CASE WHEN id <= ${sql.lit(SEED.storedInbound)} THEN id ELSE NULL END, '[]', '[]', '{}', NULL, 'body', NULL FROM emails`.execute(db);
  await sql`INSERT INTO email_imap (email_id, size, envelope, bodystructure) SELECT id, 5000, '[]', '[]' FROM emails`.execute(db);
  await sql`INSERT INTO attachments (email_id, filename, content_type, size, content_id, disposition, sha256)
    SELECT id, 'a.pdf', 'application/pdf', 1000, NULL, 'attachment', 'h' || (id % 1000) FROM emails WHERE id % 5 = 0`.execute(db);
  await sql`UPDATE folders SET uidnext = ${total + 1}`.execute(db);
  await sql`WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ${sql.lit(SEED.storedInbound)})
    INSERT INTO inbound (id, kind, status, message, targets, raw, raw_path, size, error, attempts, created_at, done_at)
    SELECT i, 'smtp', 'stored', '{}', '[]', NULL, NULL, 5000, NULL, 0, ${sql.lit(T0)}, NULL FROM n`.execute(db);
  // The message_id reservations of a backlog of accepted API mail not yet stored.
  await sql`WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ${sql.lit(SEED.reservations)})
    INSERT INTO inbound_reservations (mailbox_id, message_id, inbound_id) SELECT 1, '<r' || i || '@seed.example>', i FROM n`.execute(db);
  await sql`WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < ${sql.lit(SEED.sentOutbound + 20)})
    INSERT INTO outbound (id, tenant_id, kind, email_id, inbound_id, message_ref, mail_from, rcpt_to, via_domain, auth, status, attempts,
      next_attempt_at, last_response, dsn_sent, created_at, updated_at)
    SELECT i, 1 + (i % 2), 'forward', i, i, NULL, 'from@big.example', 'rcpt' || i || '@far.example', 'big.example', NULL,
      CASE WHEN i <= ${sql.lit(SEED.sentOutbound)} THEN 'sent' ELSE 'queued' END, 1,
      CASE WHEN i <= ${sql.lit(SEED.sentOutbound)} THEN NULL ELSE ${sql.lit(T0)} + i END, '250 ok', 0, ${sql.lit(T0)}, ${sql.lit(T0)}
    FROM n`.execute(db);
  await sql`WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
    INSERT INTO submission_sends (mailbox_id, recipients, at) SELECT 1 + (i % 5), 1, ${sql.lit(T0)} + i * 1000 FROM n`.execute(db);
  if (backendOf(db).kind === 'postgres') {
    // Rows were given their ids: the identities continue after them.
    for (const table of ['tenants', 'domains', 'mailboxes', 'emails', 'inbound', 'outbound', 'attachments']) {
      await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), (SELECT max(id) FROM ${sql.table(table)}))`.execute(db);
    }
  }
  // PostgreSQL's autovacuum analyses a running database; the server never runs ANALYZE on SQLite,
  // so its plans there are chosen without statistics (the test reads them both ways).
  if (backendOf(db).kind === 'postgres') await sql`ANALYZE`.execute(db);
}
