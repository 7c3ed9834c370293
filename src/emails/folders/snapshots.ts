import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { FolderEntry } from './types.js';

/** Messages of folders kept across SELECTs, at most this many in all (~46 bytes each: ~23 MB) or the one folder last selected, least recently used dropped first. */
export const SNAPSHOT_ENTRY_BUDGET = 500_000;
/** Changes of one mailbox read per statement when a kept folder catches up. */
const CHANGE_PAGE = 1000;
/** Past this many changes since it was kept, a folder is read afresh instead of caught up. */
const MAX_CATCH_UP = 20_000;

type EntryRow = { id: number; uid: number; flags: string; read: number | boolean; modseq: number };
type ChangeRow = EntryRow & { folder: string; deleted_at: number | null };

/**
 * A folder's live messages in UID order and the newest change marker they reflect, one array per
 * field (~30 bytes a message; as objects with a map by id they took ~210).
 */
interface Kept {
  ids: number[];
  uids: number[];
  flags: string[];
  read: boolean[];
  modseqs: number[];
  marker: number;
}

const isRead = (r: number | boolean) => r === 1 || r === true;

/**
 * The message lists of folders as IMAP SELECT opens them (issue 47). Reading a folder row by row
 * costs in proportion to its size (~250 ms for 200,000 messages, almost all of it making one
 * JavaScript row per message), and clients select the same large folders again and again. So a
 * folder's list is kept after its first read, with the change marker it reflects, and the next
 * SELECT reads only the mailbox's changes after that marker (indexed by tenant and marker) and
 * folds them in: updated_seq rises in commit order on both databases (mailstore/markers.ts) and
 * every write of a message (flags, read, move, delete) gives it a new one, so the rows changed
 * after the marker are exactly what the kept list misses. Each caller gets entries of its own (a
 * view changes its entries). Bounded by SNAPSHOT_ENTRY_BUDGET messages in all, or by the folder last
 * selected when it alone is larger.
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

  /** The tenant's newest marker (its index's last entry; the mailbox has no marker index of its own). */
  const highestOf = (tenantId: number) =>
    sql<{ m: number | null }>`SELECT max(updated_seq) AS m FROM emails WHERE tenant_id = ${tenantId}`.execute(db).then((r) => Number(r.rows[0]?.m ?? 0));

  async function fresh(tenantId: number, mailboxId: number, folder: string): Promise<Kept> {
    // The marker first: rows written after it are read again as changes, which only repeats them.
    const marker = await highestOf(tenantId);
    const k: Kept = { ids: [], uids: [], flags: [], read: [], modseqs: [], marker };
    for (const r of await read(mailboxId, folder)) push(k, r);
    return k;
  }

  function push(k: Kept, r: EntryRow): void {
    k.ids.push(r.id);
    k.uids.push(r.uid);
    k.flags.push(r.flags);
    k.read.push(isRead(r.read));
    k.modseqs.push(Number(r.modseq));
  }

  /** Folds the mailbox's changes since the kept marker in; false when there were too many to be worth it. */
  async function catchUp(k: Kept, tenantId: number, mailboxId: number, folder: string): Promise<boolean> {
    // The newest state of each changed message (pages come in marker order: the last row wins).
    const latest = new Map<number, ChangeRow>();
    for (let seen = 0; ;) {
      const rows = await changesAfter(tenantId, mailboxId, k.marker);
      for (const r of rows) {
        latest.set(r.id, r);
        k.marker = Math.max(k.marker, Number(r.modseq));
      }
      seen += rows.length;
      if (rows.length < CHANGE_PAGE) break;
      if (seen >= MAX_CATCH_UP) return false;
    }
    if (latest.size === 0) return true;
    // One pass over the kept list: changed messages take their new state or leave; the rest stay.
    let removed = false;
    let resort = false;
    for (let i = 0; i < k.ids.length; i++) {
      const r = latest.get(k.ids[i]);
      if (!r) continue;
      latest.delete(r.id);
      if (r.deleted_at !== null || r.folder !== folder) { k.ids[i] = -1; removed = true; continue; }
      if (r.uid !== k.uids[i]) { k.uids[i] = r.uid; resort = true; }
      k.flags[i] = r.flags;
      k.read[i] = isRead(r.read);
      k.modseqs[i] = Number(r.modseq);
    }
    if (removed) {
      let w = 0;
      for (let i = 0; i < k.ids.length; i++) {
        if (k.ids[i] === -1) continue;
        k.ids[w] = k.ids[i]; k.uids[w] = k.uids[i]; k.flags[w] = k.flags[i]; k.read[w] = k.read[i]; k.modseqs[w] = k.modseqs[i];
        w++;
      }
      for (const a of [k.ids, k.uids, k.flags, k.read, k.modseqs]) a.length = w;
    }
    // Messages new to the folder (arrived, moved or copied in).
    for (const r of latest.values()) {
      if (r.deleted_at !== null || r.folder !== folder) continue;
      if (k.uids.length && r.uid < k.uids[k.uids.length - 1]) resort = true;
      push(k, r);
    }
    if (resort) {
      const order = k.ids.map((_, i) => i).sort((a, b) => k.uids[a] - k.uids[b]);
      const [ids, uids, flags, read, modseqs] = [k.ids, k.uids, k.flags, k.read, k.modseqs];
      k.ids = order.map((i) => ids[i]); k.uids = order.map((i) => uids[i]); k.flags = order.map((i) => flags[i]);
      k.read = order.map((i) => read[i]); k.modseqs = order.map((i) => modseqs[i]);
    }
    return true;
  }

  function keep(key: string, k: Kept): void {
    kept.set(key, k);
    total += k.ids.length;
    // The least recently used first (a Map iterates in insertion order; a kept folder is re-inserted on
    // use). The folder just read stays even when it alone is over the budget, which then holds it
    // alone: a folder larger than the budget would otherwise be read whole on every SELECT.
    for (const [oldKey, old] of kept) {
      if (total <= budget || oldKey === key) break;
      kept.delete(oldKey);
      total -= old.ids.length;
    }
  }

  async function current(tenantId: number, mailboxId: number, folder: string): Promise<FolderEntry[]> {
    const key = `${mailboxId}\u0000${folder}`;
    let k = kept.get(key);
    // A catch-up that fails half-way leaves the kept list half-folded: it is dropped first.
    kept.delete(key);
    if (k) total -= k.ids.length;
    if (!k || !(await catchUp(k, tenantId, mailboxId, folder))) k = await fresh(tenantId, mailboxId, folder);
    keep(key, k);
    const out = new Array<FolderEntry>(k.ids.length);
    for (let i = 0; i < out.length; i++) out[i] = { id: k.ids[i], uid: k.uids[i], flags: k.flags[i], read: k.read[i], modseq: k.modseqs[i] };
    return out;
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
