import type { Selectable } from 'kysely';
import type { Db } from '../db/connection.js';
import { DEFAULT_FOLDERS } from '../db/migrations/010_folders.js';
import { folderStore } from '../mailstore/folder-store.js';
import type { VacationSettingsTable } from '../db/tables/sieve-store.js';

/** A mailbox's active script, as the filter step reads it. */
export interface ActiveScript { id: number; script: string; updated_at: number }
/** What a mailbox filters with: its active script and its enabled vacation reply (either may be absent). */
export interface MailboxFilters { script: ActiveScript | null; vacation: Selectable<VacationSettingsTable> | null }
/** A filtering mailbox's own address and its folders (fileinto :create adds to the set as it creates one). */
export interface FilteringBox { address: string | undefined; folders: Set<string> }

/**
 * The filter step's reads, made once per mailbox per storage batch rather than once per message.
 *
 * Held per transaction object (a WeakMap: it goes with the transaction), so what it holds is what
 * that transaction would read again: nothing else writes these rows inside it (the filter step's
 * own folder creations are added to the cached set), and a batch retried after a rollback gets a
 * new transaction, hence a fresh cache. No state outlives a batch, so a script, vacation or folder
 * change made on any node is seen by the next batch, as before.
 */
export class BatchLookups {
  private readonly filters = new Map<number, MailboxFilters>();
  private readonly boxes = new Map<number, FilteringBox>();

  constructor(private readonly trx: Db) {}

  /** The scripts and vacation replies of `ids`, reading only the mailboxes this batch has not read yet. */
  async filtersOf(ids: readonly number[]): Promise<Map<number, MailboxFilters>> {
    const missing = [...new Set(ids.filter((id) => !this.filters.has(id)))];
    if (missing.length > 0) {
      const scripts = await this.trx.selectFrom('sieve_scripts').select(['id', 'mailbox_id', 'script', 'updated_at']).where('active', '=', 1).where('mailbox_id', 'in', missing).execute();
      const vacations = await this.trx.selectFrom('vacation_settings').selectAll().where('enabled', '=', 1).where('mailbox_id', 'in', missing).execute();
      for (const id of missing) this.filters.set(id, { script: null, vacation: null });
      for (const s of scripts) this.filters.get(Number(s.mailbox_id))!.script = { id: Number(s.id), script: s.script, updated_at: Number(s.updated_at) };
      for (const v of vacations) this.filters.get(Number(v.mailbox_id))!.vacation = v;
    }
    return new Map(ids.map((id) => [id, this.filters.get(id)!]));
  }

  /** The addresses and folders of filtering mailboxes, their default folders made when some are missing (once per batch). */
  async boxesOf(ids: readonly number[], now: number): Promise<Map<number, FilteringBox>> {
    const missing = [...new Set(ids.filter((id) => !this.boxes.has(id)))];
    if (missing.length > 0) {
      const addresses = await this.trx.selectFrom('mailboxes').select(['id', 'address']).where('id', 'in', missing).execute();
      const folders = await this.trx.selectFrom('folders').select(['mailbox_id', 'name']).where('mailbox_id', 'in', missing).execute();
      for (const id of missing) this.boxes.set(id, { address: undefined, folders: new Set<string>() });
      for (const a of addresses) this.boxes.get(Number(a.id))!.address = a.address;
      for (const f of folders) this.boxes.get(Number(f.mailbox_id))!.folders.add(f.name);
      // The default folders exist for nearly every mailbox: the insert (a write) only for one that lacks some.
      const lacking = missing.filter((id) => DEFAULT_NAMES.some((n) => !this.boxes.get(id)!.folders.has(n)));
      if (lacking.length > 0) {
        await folderStore.ensureDefaults(this.trx, lacking, now);
        for (const id of lacking) for (const n of DEFAULT_NAMES) this.boxes.get(id)!.folders.add(n);
      }
    }
    return new Map(ids.map((id) => [id, this.boxes.get(id)!]));
  }
}

const DEFAULT_NAMES = DEFAULT_FOLDERS.map(([name]) => name);
const perTransaction = new WeakMap<Db, BatchLookups>();

/** The lookups of the batch whose transaction is `trx`. */
export function batchLookups(trx: Db): BatchLookups {
  let hit = perTransaction.get(trx);
  if (!hit) { hit = new BatchLookups(trx); perTransaction.set(trx, hit); }
  return hit;
}
