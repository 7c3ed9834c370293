import { Session, type Hop, type TransportOptions } from './transport.js';

/** Pool settings: sessions per MX address at once, and how long an idle one is kept for reuse. */
export interface PoolOptions extends TransportOptions {
  perHost: number;
  idleMs: number;
}

/**
 * Sessions to MX addresses, at most `perHost` at a time to each (receivers throttle or refuse
 * floods from one client), reused while idle: the next transaction for the same address starts
 * with MAIL (or RSET after one that did not end cleanly) instead of a new connection, EHLO and
 * TLS handshake.
 */
export function createSessionPool(opts: PoolOptions) {
  const idle = new Map<string, Array<{ session: Session; timer: NodeJS.Timeout }>>();
  const active = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const inUse = new Set<Session>();
  let closed = false;
  const keyOf = (hop: Hop) => `${hop.address}|${hop.port}|${hop.tls}|${hop.host}`;

  async function slot(key: string): Promise<void> {
    while ((active.get(key) ?? 0) >= opts.perHost) {
      await new Promise<void>((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
    }
    active.set(key, (active.get(key) ?? 0) + 1);
  }

  function freeSlot(key: string): void {
    active.set(key, Math.max(0, (active.get(key) ?? 1) - 1));
    const next = waiting.get(key)?.shift();
    if (next) next();
  }

  return {
    /**
     * A session to `hop`: an idle one made ready for reuse (session.reset), else a new one (always a
     * new one with `fresh`). Rejects with a SessionError.
     */
    async acquire(hop: Hop, o: { fresh?: boolean } = {}): Promise<Session> {
      const key = keyOf(hop);
      await slot(key);
      const list = o.fresh ? [] : idle.get(key) ?? [];
      while (list.length > 0) {
        const { session, timer } = list.pop()!;
        clearTimeout(timer);
        if (session.usable && (await session.reset())) { inUse.add(session); return session; }
        session.close();
      }
      try {
        const session = await Session.open(hop, opts);
        inUse.add(session);
        return session;
      } catch (err) {
        freeSlot(key);
        throw err;
      }
    },

    /** Gives a session back: kept for reuse when it still works, else closed. */
    release(session: Session, reusable: boolean): void {
      inUse.delete(session);
      const key = keyOf(session.hop);
      const list = idle.get(key) ?? [];
      if (!closed && reusable && session.usable && list.length < opts.perHost) {
        const entry = { session, timer: setTimeout(() => {
          const at = list.indexOf(entry);
          if (at >= 0) list.splice(at, 1);
          session.close();
        }, opts.idleMs) };
        entry.timer.unref();
        list.push(entry);
        idle.set(key, list);
      } else {
        session.close();
      }
      freeSlot(key);
    },

    /** Closes every idle session (shutdown); sessions in use close when released. */
    close(): void {
      closed = true;
      for (const list of idle.values()) {
        for (const { session, timer } of list) { clearTimeout(timer); session.close(); }
      }
      idle.clear();
    },

    /** Cuts the sessions in use (a shutdown that cannot wait): their transactions fail and are retried later. */
    abort(): void {
      for (const session of inUse) session.abort();
    },
  };
}
export type SessionPool = ReturnType<typeof createSessionPool>;
