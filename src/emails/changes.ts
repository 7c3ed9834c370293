/**
 * Word, inside this process, that mail of some mailboxes changed and the change is committed:
 * delivered (the ingest commit), read, deleted, flagged, moved, copied or appended. IMAP's IDLE
 * listens so an idling client hears of it at once instead of at its next poll; a poll stays for
 * changes made by other processes (the CLI, other nodes), which this cannot see.
 */
export function createMailChanges() {
  const listeners = new Set<(mailboxIds: readonly number[]) => void>();
  return {
    /** Tells every listener; call after the commit (a listener reads the change at once). */
    committed(mailboxIds: Iterable<number>): void {
      if (listeners.size === 0) return;
      const ids = [...new Set(mailboxIds)];
      if (ids.length === 0) return;
      for (const l of listeners) l(ids);
    },
    /** Adds a listener; answers the function that removes it. */
    listen(listener: (mailboxIds: readonly number[]) => void): () => void {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
  };
}
export type MailChanges = ReturnType<typeof createMailChanges>;
