import type { MailChanges } from '../emails/changes.js';
import type { Logger } from '../logger.js';

/**
 * How often idling sessions look for changes this process was not told of (the CLI, other nodes):
 * with the look itself, inside the 1 s DECISIONS.md section 14 allows. Changes made in this process
 * wake them at once (MailChanges).
 */
export const IDLE_POLL_MS = 500;

/** An idling session as the watch sees it. */
export interface Idler {
  tenantId: number;
  mailboxId: number;
  /** The newest change marker the session has read. */
  marker(): number;
  /** Reads and announces changes (the session runs one look at a time and coalesces wake-ups). */
  wake(): void;
}

/**
 * Wakes idling IMAP sessions: at once for a change committed in this process to their mailbox, and
 * on a poll for changes made elsewhere. The poll is one query per tenant with idling sessions, not
 * one per session, so 500 idle clients cost what one does.
 */
export function createIdleWatch(deps: { changes?: MailChanges; highestModseq(tenantId: number): Promise<number>; logger: Logger; pollMs?: number }) {
  const byMailbox = new Map<number, Set<Idler>>();
  const byTenant = new Map<number, Set<Idler>>();
  let pollMs = deps.pollMs ?? IDLE_POLL_MS;
  let timer: NodeJS.Timeout | null = null;
  let polling = false;

  const stopListening = deps.changes?.listen((mailboxIds) => {
    for (const id of mailboxIds) for (const idler of byMailbox.get(id) ?? []) idler.wake();
  });

  async function poll(): Promise<void> {
    if (polling) return;
    polling = true;
    try {
      for (const [tenantId, idlers] of [...byTenant]) {
        const top = await deps.highestModseq(tenantId);
        for (const idler of idlers) if (top > idler.marker()) idler.wake();
      }
    } catch (err) {
      deps.logger.warn({ err }, 'imap idle poll failed');
    } finally {
      polling = false;
    }
  }

  function schedule(): void {
    if (timer) clearInterval(timer);
    timer = byTenant.size > 0 ? setInterval(() => void poll(), pollMs) : null;
    timer?.unref();
  }

  const add = <K>(map: Map<K, Set<Idler>>, key: K, idler: Idler) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(idler);
  };
  const remove = <K>(map: Map<K, Set<Idler>>, key: K, idler: Idler) => {
    const set = map.get(key);
    set?.delete(idler);
    if (set?.size === 0) map.delete(key);
  };

  return {
    /** Watches for an idling session until the function it answers is called. */
    watch(idler: Idler): () => void {
      const first = byTenant.size === 0;
      add(byMailbox, idler.mailboxId, idler);
      add(byTenant, idler.tenantId, idler);
      if (first) schedule();
      return () => {
        remove(byMailbox, idler.mailboxId, idler);
        remove(byTenant, idler.tenantId, idler);
        if (byTenant.size === 0) schedule();
      };
    },
    /** The poll's interval (ms). */
    get pollMs(): number { return pollMs; },
    /** Sets the poll's interval; a test sets it long to see that a change wakes a session by itself. */
    set pollMs(ms: number) {
      pollMs = ms;
      if (timer) schedule();
    },
    /** Stops polling and listening. */
    close(): void {
      stopListening?.();
      if (timer) clearInterval(timer);
      timer = null;
      byMailbox.clear();
      byTenant.clear();
    },
  };
}
export type IdleWatch = ReturnType<typeof createIdleWatch>;
