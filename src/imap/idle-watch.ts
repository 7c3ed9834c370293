import type { MailChanges } from '../emails/mail-changes.js';
import type { Logger } from '../logger.js';

/**
 * How often idling sessions look for changes this process was not told of (the CLI, a notification
 * from another node lost with a connection): with the look itself, inside the 1 s DECISIONS.md
 * section 14 allows. Changes made in this process, or on another node on PostgreSQL
 * (emails/pg-changes.ts), wake them at once (MailChanges). MAILSTEAD_IMAP_IDLE_POLL_MS sets it.
 */
export const IDLE_POLL_MS = 500;

/** An idling session as the watch sees it. */
export interface Idler {
  tenantId: number;
  mailboxId: number;
  /** The newest change marker the session has read; null with no folder selected (nothing to announce). */
  marker(): number | null;
  /** Reads and announces changes (the session runs one look at a time and coalesces wake-ups). */
  wake(): void;
}

/** A tenant with idlers: the mailboxes they idle in and the change marker its poll has read up to. */
interface Tenant {
  mailboxes: Set<number>;
  polledTo: number;
}

/**
 * Wakes idling IMAP sessions: at once for a change committed in this process to their mailbox, and
 * on a poll for changes made elsewhere. The poll is one query per tenant with idling sessions (not
 * one per session, so 500 idle clients cost what one does) for the mailboxes changed since the last
 * one, and wakes only sessions of those that have not seen the change yet: a change woken for in
 * this process is not looked at again, and mail arriving in one mailbox leaves the sessions of the
 * tenant's other mailboxes asleep.
 */
export function createIdleWatch(deps: {
  changes?: MailChanges;
  changedMailboxes(tenantId: number, after: number): Promise<Map<number, number>>;
  logger: Logger;
  pollMs?: number;
}) {
  const tenants = new Map<number, Tenant>();
  /** Idlers by mailbox (ids are unique across tenants). */
  const byMailbox = new Map<number, Set<Idler>>();
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
      for (const [tenantId, t] of [...tenants]) {
        // Markers rise in commit order (markers.ts), so nothing can commit below one already read.
        const changed = await deps.changedMailboxes(tenantId, t.polledTo);
        for (const [mailboxId, top] of changed) {
          t.polledTo = Math.max(t.polledTo, top);
          for (const idler of byMailbox.get(mailboxId) ?? []) {
            const seen = idler.marker();
            if (seen !== null && top > seen) idler.wake();
          }
        }
      }
    } catch (err) {
      deps.logger.warn({ err }, 'imap idle poll failed');
    } finally {
      polling = false;
    }
  }

  function schedule(): void {
    if (timer) clearInterval(timer);
    timer = tenants.size > 0 ? setInterval(() => void poll(), pollMs) : null;
    timer?.unref();
  }

  return {
    /** Watches for an idling session until the function it answers is called. */
    watch(idler: Idler): () => void {
      const first = tenants.size === 0;
      let t = tenants.get(idler.tenantId);
      if (!t) tenants.set(idler.tenantId, (t = { mailboxes: new Set(), polledTo: Number.MAX_SAFE_INTEGER }));
      // The poll reads from the oldest marker any of the tenant's idlers has seen.
      t.polledTo = Math.min(t.polledTo, idler.marker() ?? Number.MAX_SAFE_INTEGER);
      t.mailboxes.add(idler.mailboxId);
      let set = byMailbox.get(idler.mailboxId);
      if (!set) byMailbox.set(idler.mailboxId, (set = new Set()));
      set.add(idler);
      if (first) schedule();
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const own = byMailbox.get(idler.mailboxId);
        own?.delete(idler);
        if (own?.size !== 0) return;
        byMailbox.delete(idler.mailboxId);
        const tenant = tenants.get(idler.tenantId);
        tenant?.mailboxes.delete(idler.mailboxId);
        if (tenant?.mailboxes.size === 0) tenants.delete(idler.tenantId);
        if (tenants.size === 0) schedule();
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
      tenants.clear();
      byMailbox.clear();
    },
  };
}
export type IdleWatch = ReturnType<typeof createIdleWatch>;
