import type pg from 'pg';

/**
 * The one connection a node keeps for itself on PostgreSQL, apart from the pool that Kysely uses:
 * - LISTEN: a notification sent inside a transaction (NOTIFY) reaches every node once that
 *   transaction commits, so a worker woken by it always sees the rows that caused it;
 * - session advisory locks: held as long as the node lives, and released by PostgreSQL itself
 *   when the node dies (its connection ends), which is how other nodes tell a crashed node's
 *   work from work still under way.
 * Queries on it run one at a time, in order (a chain of our own: node-postgres deprecates queueing
 * them on a client), so each must be one statement.
 */
export interface NodeSession {
  /** Runs one statement on the session's connection (connecting first if needed). */
  query<R extends pg.QueryResultRow = any>(text: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /**
   * Calls `fn` on each notification of `channel` with its payload, and whether this very connection
   * sent it (`own`); after a reconnect, when some may have been lost, once with a null payload.
   */
  listen(channel: string, fn: Listener): Promise<void>;
  /**
   * Whether the connection is open with every channel LISTENed: while it is not (never connected,
   * lost, reconnecting), notifications of commits made meanwhile may never arrive.
   */
  connected(): boolean;
  close(): Promise<void>;
}

/** A listener of a channel: the payload (null: notifications may have been lost), and whether this node's session sent it. */
export type Listener = (payload: string | null, own: boolean) => void;

const RECONNECT_MS = 1000;

/** A channel name as an SQL identifier (ours are fixed lower-case words, so only that is allowed). */
function channelIdent(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`bad channel name ${channel}`);
  return channel;
}

export function createNodeSession(pool: pg.Pool, onError: (err: Error) => void = () => undefined): NodeSession {
  const listeners = new Map<string, Listener[]>();
  let client: Promise<pg.PoolClient> | null = null;
  let closed = false;
  /** The open connection's LISTENs are all in place (see connected()). */
  let up = false;
  /** Connections given back to the pool: a late error event must not give one back twice. */
  const released = new WeakSet<pg.PoolClient>();

  function connect(): Promise<pg.PoolClient> {
    client ??= (async () => {
      const c = await pool.connect();
      c.on('notification', (msg) => {
        // processID: the backend of this connection (pg sets it at connect), so own NOTIFYs are told apart.
        const own = msg.processId === (c as unknown as { processID?: number }).processID;
        for (const fn of listeners.get(msg.channel) ?? []) fn(msg.payload ?? '', own);
      });
      c.on('error', (err) => {
        if (released.has(c)) return; // ended by close(): nothing to recover
        released.add(c);
        up = false;
        onError(err);
        // The connection is gone, and with it our advisory locks and LISTENs: start over.
        c.release(err);
        client = null;
        if (!closed) setTimeout(() => void reconnect(), RECONNECT_MS).unref();
      });
      for (const channel of listeners.keys()) await c.query(`LISTEN ${channelIdent(channel)}`);
      up = !released.has(c);
      return c;
    })().catch((err) => { client = null; throw err; });
    return client;
  }

  async function reconnect(): Promise<void> {
    try {
      await connect();
      // Notifications sent while we were away are lost: let every listener look for work.
      for (const fns of listeners.values()) for (const fn of fns) fn(null, false);
    } catch (err) {
      onError(err as Error);
      if (!closed) setTimeout(() => void reconnect(), RECONNECT_MS).unref();
    }
  }

  /** The last statement sent: the next one starts when it settles. */
  let tail: Promise<unknown> = Promise.resolve();
  function inTurn<R>(run: (c: pg.PoolClient) => Promise<R>): Promise<R> {
    const turn = tail.then(async () => run(await connect()));
    tail = turn.catch(() => undefined);
    return turn;
  }

  return {
    query(text, params) {
      return inTurn((c) => c.query(text, params));
    },
    async listen(channel, fn) {
      const known = listeners.get(channel);
      if (known) { known.push(fn); return; }
      listeners.set(channel, [fn]);
      await inTurn((c) => c.query(`LISTEN ${channelIdent(channel)}`));
    },
    connected: () => up && !closed,
    async close() {
      closed = true;
      up = false;
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
 * Runs `fn` unless another node runs the job of that name: the first node to take a session
 * advisory lock on the job's name on its own connection keeps it for as long as it lives, and does
 * the job at each of its ticks; every other node, ticking at about the same moment, finds the lock
 * taken and leaves the tick alone. Releasing the lock after each run would let a node whose clock
 * ticks a few milliseconds later run the same tick again once the first finished. PostgreSQL drops
 * the lock with the connection of a node that dies (or loses its connection), and then the next
 * node to tick takes the job over. One statement: whether this connection holds the lock already
 * (pg_locks, so a reconnect that lost it is noticed), else a try that does not wait.
 * Resolves `skipped` when it did not run here.
 */
export async function runAlone(session: NodeSession, name: string, fn: () => unknown): Promise<'ran' | 'skipped'> {
  const { rows } = await session.query<{ got: boolean }>(`
    SELECT CASE WHEN EXISTS (
      SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
        AND classid = ($1::int4)::oid AND objid = ($2::int4)::oid AND objsubid = 2
    ) THEN true ELSE pg_try_advisory_lock($1::int4, $2::int4) END AS got`, [CRON_LOCK_CLASS, nameKey(name)]);
  if (!rows[0]!.got) return 'skipped';
  await fn();
  return 'ran';
}

/** Advisory lock keys of row ids: the two-key form takes int4 keys (ids wrap past 2^31 - 1). */
export const lockKey = (id: number): number => id % 2_147_483_647;
export const lockKeys = (ids: readonly number[]): number[] => ids.map(lockKey);
