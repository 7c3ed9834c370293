import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { FolderEntry } from './types.js';

/** Folder entries kept in memory across SELECTs, at most this many in all (least recently used go first). */
export const SNAPSHOT_ENTRY_BUDGET = 600_000;
/** Changes of one mailbox read per statement when a kept folder catches up. */
const CHANGE_PAGE = 1000;
/** Past this many changes since it was kept, a folder is read afresh instead of caught up. */
const MAX_CATCH_UP = 20_000;

type EntryRow = { id: number; uid: number; flags: string; read: number | boolean; modseq: number };
type ChangeRow = EntryRow & { folder: string; deleted_at: number | null };

/** A folder's live messages in UID order and the newest change marker they reflect. */
interface Kept {
  entries: FolderEntry[];
  byId: Map<number, FolderEntry>;
  marker: number;
}

const copyOf = (e: FolderEntry): FolderEntry => ({ id: e.id, uid: e.uid, flags: e.flags, read: e.read, modseq: e.modseq });

/**
 * The message lists of folders as IMAP SELECT opens them (issue 47). Reading a folder row by row
 * costs in proportion to its size (~250 ms for 200,000 messages, almost all of it making one
 * JavaScript row per message), and clients select the same large folders again and again. So a
 * folder's list is kept after its first read, with the change marker it reflects, and the next
 * SELECT reads only the mailbox's changes after that marker (indexed by tenant and marker) and
 * folds them in: updated_seq rises in commit order on both databases (mailstore/markers.ts) and
 * every write of a message (flags, read, move, delete) gives it a new one, so the rows changed
 * after the marker are exactly what the kept list misses. Each caller gets its own copy (a view
 * changes its entries). Bounded by SNAPSHOT_ENTRY_BUDGET entries in all.
 */
export function folderSnapshots(db: Db, budget = SNAPSHOT_ENTRY_BUDGET) {
  const kept = new Map<string, Kept>();
  /** One read or catch-up of a folder at a time (a second SELECT waits for the first). */
  const busy = new Map<string, Promise<unknown>>();
  let total = 0;

  const read = (mailboxId: number, folder: string) =>
    sql<EntryRow>`SELECT id, uid, flags, read_at IS NOT NULL AS read, updated_seq AS modseq FROM emails
      WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL ORDER BY uid`.execute(db).then((r) => r.rows);

  /**
   * The mailbox's changes after a marker, oldest first (any folder: a message may have left this
   * one). A range of the tenant's marker index; the mailbox is compared with a unary plus so that
   * SQLite without statistics does not walk the mailbox's index instead (test/db/query-plans.test.ts).
   */
  const changesAfter = (tenantId: number, mailboxId: number, after: number) =>
    sql<ChangeRow>`SELECT id, uid, flags, read_at IS NOT NULL AS read, updated_seq AS modseq, folder, deleted_at FROM emails
      WHERE tenant_id = ${tenantId} AND updated_seq > ${after} AND +mailbox_id = ${mailboxId} ORDER BY updated_seq LIMIT ${CHANGE_PAGE}`.execute(db).then((r) => r.rows);

  const entryOf = (r: EntryRow): FolderEntry => ({ id: r.id, uid: r.uid, flags: r.flags, read: r.read === 1 || r.read === true, modseq: Number(r.modseq) });

  async function fresh(tenantId: number, mailboxId: number, folder: string): Promise<Kept> {
    // The marker first: rows written after it are read again as changes, which only repeats them.
    const marker = await highestOf(tenantId);
    const entries = (await read(mailboxId, folder)).map(entryOf);
    return { entries, byId: new Map(entries.map((e) => [e.id, e])), marker };
  }

  /** The tenant's newest marker (its index's last entry; the mailbox has no marker index of its own). */
  const highestOf = (tenantId: number) =>
    sql<{ m: number | null }>`SELECT max(updated_seq) AS m FROM emails WHERE tenant_id = ${tenantId}`.execute(db).then((r) => Number(r.rows[0]?.m ?? 0));

  /** Folds the mailbox's changes since the kept marker in; false when there were too many to be worth it. */
  async function catchUp(k: Kept, tenantId: number, mailboxId: number, folder: string): Promise<boolean> {
    let removed = false;
    let resort = false;
    for (let seen = 0; ;) {
      const rows = await changesAfter(tenantId, mailboxId, k.marker);
      for (const r of rows) {
        const here = r.deleted_at === null && r.folder === folder;
        const known = k.byId.get(r.id);
        if (known && !here) { removed = true; k.byId.delete(r.id); } else if (known) {
          if (known.uid !== r.uid) { known.uid = r.uid; resort = true; }
          known.flags = r.flags;
          known.read = r.read === 1 || r.read === true;
          known.modseq = Number(r.modseq);
        } else if (here) {
          const e = entryOf(r);
          if (k.entries.length && e.uid < k.entries[k.entries.length - 1].uid) resort = true;
          k.entries.push(e);
          k.byId.set(e.id, e);
        }
        k.marker = Math.max(k.marker, Number(r.modseq));
      }
      seen += rows.length;
      if (rows.length < CHANGE_PAGE) break;
      if (seen >= MAX_CATCH_UP) return false;
    }
    if (removed) k.entries = k.entries.filter((e) => k.byId.get(e.id) === e);
    if (resort) k.entries.sort((a, b) => a.uid - b.uid);
    return true;
  }

  function keep(key: string, k: Kept): void {
    if (k.entries.length > budget) return;
    kept.set(key, k);
    total += k.entries.length;
    // The least recently used first (a Map iterates in insertion order; a kept folder is re-inserted on use).
    for (const [oldKey, old] of kept) {
      if (total <= budget) break;
      kept.delete(oldKey);
      total -= old.entries.length;
    }
  }

  async function current(tenantId: number, mailboxId: number, folder: string): Promise<FolderEntry[]> {
    const key = `${mailboxId}\u0000${folder}`;
    let k = kept.get(key);
    // A catch-up that fails half-way leaves the kept list half-folded: it is dropped first.
    kept.delete(key);
    if (k) total -= k.entries.length;
    if (!k || !(await catchUp(k, tenantId, mailboxId, folder))) k = await fresh(tenantId, mailboxId, folder);
    keep(key, k);
    return k.entries.map(copyOf);
  }

  return {
    /** The live messages of a folder in UID order, each the caller's own (kept between calls, caught up from the changes). */
    entries(tenantId: number, mailboxId: number, folder: string): Promise<FolderEntry[]> {
      const key = `${mailboxId}\u0000${folder}`;
      const run = (busy.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => current(tenantId, mailboxId, folder));
      const settled = run.catch(() => undefined);
      busy.set(key, settled);
      void settled.then(() => { if (busy.get(key) === settled) busy.delete(key); });
      return run;
    },
    /** How many entries are kept (tests). */
    keptEntries: () => total,
  };
}
export type FolderSnapshots = ReturnType<typeof folderSnapshots>;
