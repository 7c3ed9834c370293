import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import { ApiError } from '../../errors.js';
import { folderStore } from '../../mailstore/folder-store.js';
import type { Markers } from '../../mailstore/markers.js';
import type { EmailService } from '../service.js';
import type { EmailStore } from '../store.js';
import type { FolderSearchPort } from './ports.js';
import type { FolderTraining } from './training.js';

/** What the folder queries are built on: the connection, the email store and service, markers and the change feed. */
export interface FolderDeps {
  db: Db;
  store: EmailStore;
  markers: Markers;
  clock: Clock;
  service: EmailService;
  /** This database's full-text match (sqlite/ or postgres/). */
  search: FolderSearchPort;
  /** Tells IDLE of a committed change of a mailbox made here (reads and deletes tell it through the service). */
  changed(mailboxId: number): void;
  /** The spam filter's training fed by moves, copies, appends and $Junk/$NotJunk (training.ts). */
  training: FolderTraining;
}

/** Reserves `n` UIDs in a folder inside the caller's transaction; refuses a folder that does not exist. */
export async function reserveUids(trx: Db, mailboxId: number, folder: string, n: number): Promise<number> {
  const first = (await folderStore.reserveUids(trx, folder, new Map([[mailboxId, n]]))).get(mailboxId);
  if (first === undefined) throw new Error(`no folder ${folder}`);
  return first;
}


/**
 * Expunges messages one by one (each a soft delete with its event). One already gone (expunged
 * meanwhile by another session or deleted over the API) is skipped; any other failure is raised, so
 * the command that asked answers NO rather than claiming the mail is gone.
 */
export async function removeAll(service: EmailService, tenantId: number, ids: number[]): Promise<void> {
  for (const id of ids) {
    try {
      await service.remove(tenantId, id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }
}
