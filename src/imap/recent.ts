/**
 * IMAP4rev1's \Recent (RFC 3501 2.3.2): a message is recent in the one session that first sees it
 * with its folder selected read-write. Kept per process as the highest UID of each folder some
 * session has claimed: after a restart, or on another node, mail may be recent once more, which
 * RFC 3501 allows (an implementation that cannot tell reports it as recent). IMAP4rev2 has no
 * \Recent; sessions that enable it are shown none.
 */
export class RecentClaims {
  private claimed = new Map<number, number>();

  /** The highest UID of the folder claimed so far (0 for none). */
  boundary(folderId: number): number {
    return this.claimed.get(folderId) ?? 0;
  }

  /** Claims every UID up to `uid` of the folder for a session; answers the boundary before. */
  claim(folderId: number, uid: number): number {
    const before = this.boundary(folderId);
    if (uid > before) this.claimed.set(folderId, uid);
    return before;
  }

  /** Forgets a folder (deleted or renamed away: its ids are not reused, this only frees memory). */
  forget(folderId: number): void {
    this.claimed.delete(folderId);
  }
}
