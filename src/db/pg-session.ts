import type pg from 'pg';

/**
 * The one connection a node keeps for itself on PostgreSQL, apart from the pool that Kysely uses:
 * - LISTEN: a notification sent inside a transaction (NOTIFY) reaches every node once that
 *   transaction commits, so a worker woken by it always sees the rows that caused it;
 * - session advisory locks: held as long as the node lives, and released by PostgreSQL itself
 *   when the node dies (its connection ends), which is how other nodes tell a crashed node's
 *   work from work still under way.
 * Queries on it run one at a time (node-postgres queues them), so each must be one statement.
 */
export interface NodeSession {
  /** Runs one statement on the session's connection (connecting first if needed). */
  query<R extends pg.QueryResultRow = any>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Calls `fn` on each notification of `channel` (and after a reconnect, when some may be lost). */
  listen(channel: string, fn: () => void): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_MS = 1000;

/** A channel name as an SQL identifier (ours are fixed lower-case words, so only that is allowed). */
function channelIdent(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  return channel;
}

export function createNodeSession(pool: pg.Pool, onError: (err: Error) => void = () => undefined): NodeSession {
  const listeners = new Map<string, Array<() => void>>();
  let client: Promise<pg.PoolClient> | null = null;
  let closed = false;
  /** Connections given back to the pool: a late error event must not give one back twice. */
  const released = new WeakSet<pg.PoolClient>();

  function connect(): Promise<pg.PoolClient> {
    client ??= (async () => {
      const c = await pool.connect();
      c.on('notification', (msg) => { for (const fn of listeners.get(msg.channel) ?? []) fn(); });
      c.on('error', (err) => {
        if (released.has(c)) return; // ended by close(): nothing to recover
        released.add(c);
        onError(err);
        // The connection is gone, and with it our advisory locks and LISTENs: start over.
        c.release(err);
        client = null;
        if (!closed) setTimeout(() => void reconnect(), RECONNECT_MS).unref();
      });
      for (const channel of listeners.keys()) await c.query(`LISTEN ${channelIdent(channel)}`);
      return c;
    })().catch((err) => { client = null; throw err; });
    return client;
  }

  async function reconnect(): Promise<void> {
    try {
      await connect();
      // Notifications sent while we were away are lost: let every listener look for work.
      for (const fns of listeners.values()) for (const fn of fns) fn();
    } catch (err) {
      onError(err as Error);
      if (!closed) setTimeout(() => void reconnect(), RECONNECT_MS).unref();
    }
  }

  return {
    async query(text, params) {
      return (await connect()).query(text, params);
    },
    async listen(channel, fn) {
      const known = listeners.get(channel);
      if (known) { known.push(fn); return; }
      listeners.set(channel, [fn]);
      await (await connect()).query(`LISTEN ${channelIdent(channel)}`);
    },
    async close() {
      closed = true;
      const c = client;
      client = null;
      const open = c ? await c.catch(() => null) : null;
      if (open && !released.has(open)) {
        released.add(open);
        open.release(true); // true: end the connection, so its locks go now
      }
    },
  };
}

/** The first key of the advisory locks of cron jobs ('cron'). */
const CRON_LOCK_CLASS = 0x63726f6e;

/** A job name as an int4 key (FNV-1a): the two-key advisory lock form takes two int4. */
function nameKey(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * Runs `fn` unless another node is running the job of that name: a session advisory lock on the
 * node's own connection, tried and not waited for (the node that holds it does this tick's work;
 * a node that dies mid-job releases it with its connection). Resolves `skipped` when it did not run.
 */
export async function runAlone(session: NodeSession, name: string, fn: () => unknown): Promise<'ran' | 'skipped'> {
  const key = nameKey(name);
  const { rows } = await session.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [CRON_LOCK_CLASS, key]);
  if (!rows[0]!.got) return 'skipped';
  try {
    await fn();
    return 'ran';
  } finally {
    await session.query('SELECT pg_advisory_unlock($1, $2)', [CRON_LOCK_CLASS, key]);
  }
}
