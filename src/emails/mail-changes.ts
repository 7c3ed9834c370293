/**
 * Word, inside this process, that mail of some mailboxes changed and the change is committed:
 * delivered (the ingest commit), read, deleted, flagged, moved, copied or appended. IMAP's IDLE
 * listens so an idling client hears of it at once instead of at its next poll. On PostgreSQL,
 * `publish` also tells the other nodes (pg-changes.ts), whose word comes back in through `arrived`;
 * a poll stays for changes nobody announced (the CLI, a notification lost with a connection).
 */
export function createMailChanges(publish?: (mailboxIds: readonly number[]) => void) {
  const listeners = new Set<(mailboxIds: readonly number[]) => void>();
  function tell(ids: readonly number[]): void {
    for (const l of listeners) l(ids);
  }
  return {
    /** Tells every listener, and other nodes; call after the commit (a listener reads the change at once). */
    committed(mailboxIds: Iterable<number>): void {
      if (listeners.size === 0 && !publish) return;
      const ids = [...new Set(mailboxIds)];
      if (ids.length === 0) return;
      publish?.(ids);
      tell(ids);
    },
    /** Tells every listener of changes another node committed (not published again). */
    arrived(mailboxIds: readonly number[]): void {
      if (listeners.size > 0 && mailboxIds.length > 0) tell(mailboxIds);
    },
    /** Adds a listener; answers the function that removes it. */
    listen(listener: (mailboxIds: readonly number[]) => void): () => void {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
  };
}
export type MailChanges = ReturnType<typeof createMailChanges>;
