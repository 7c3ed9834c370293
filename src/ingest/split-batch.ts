import type { Logger } from '../logger.js';
import type { StoreInput, StoreResult } from '../mailstore/commits.js';
import { storeApart, type Blame, type Unit } from './isolate.js';
import type { StorageThread } from '../mailstore/sqlite/storage-thread.js';

/** What storing a failed SQLite batch in parts came to (see storeInParts). */
export interface InParts {
  /** Everything the stored parts did, as one batch's result. */
  result: StoreResult;
  /** SMTP messages done with: stored, or set aside. */
  smtpDone: number;
  /** Messages to try again later, with the tries counted so far (deferred ones as a first). */
  retry: Array<{ id: number; attempts: number }>;
}

/**
 * The SQLite worker's batch (worker.ts) whose transaction failed, stored by the storage thread in
 * parts (isolate.ts): API rows by id, parsed SMTP mail and parse failures each a unit. Null when
 * nothing was stored or counted (the database's fault, not the messages').
 */
export async function storeInParts(b: StoreInput, deps: {
  thread: Pick<StorageThread, 'store' | 'note'>; blame: Blame; stopping(): boolean; log: Logger;
}): Promise<InParts | null> {
  const units: Array<Unit<StoreInput>> = [
    ...b.apiIds.map((id) => ({ id, input: { apiIds: [id], prepared: [], failed: [] } })),
    ...b.prepared.map((p) => ({ id: p.id, input: { apiIds: [], prepared: [p], failed: [] } })),
    ...b.failed.map((f) => ({ id: f.id, input: { apiIds: [], prepared: [], failed: [f] } })),
  ];
  const merge = (inputs: StoreInput[]): StoreInput => ({
    apiIds: inputs.flatMap((i) => i.apiIds), prepared: inputs.flatMap((i) => i.prepared), failed: inputs.flatMap((i) => i.failed),
  });
  const apart = await storeApart(units, {
    store: (inputs) => deps.thread.store(merge(inputs)), note: (id, reason) => deps.thread.note(id, reason),
    blame: deps.blame, stopping: deps.stopping, log: deps.log,
  });
  if (apart.stored.length === 0 && apart.failed.length === 0) return null;
  const api = new Set(b.apiIds);
  const results = apart.stored.map((s) => s.result);
  const result: StoreResult = {
    unlink: results.flatMap((r) => r.unlink), stored: results.reduce((n, r) => n + r.stored, 0),
    forwarded: results.reduce((n, r) => n + r.forwarded, 0) + apart.failed.reduce((n, f) => n + f.note.forwarded, 0),
    mailboxIds: [...new Set(results.flatMap((r) => r.mailboxIds))],
    verdicts: { ham: results.reduce((n, r) => n + r.verdicts.ham, 0), junk: results.reduce((n, r) => n + r.verdicts.junk, 0) },
    filterErrors: results.flatMap((r) => r.filterErrors ?? []),
  };
  // A parse failure's unit stored its note (the row stays queued unless final): only final ones are done.
  const notFinal = new Set(b.failed.filter((f) => !f.final).map((f) => f.id));
  const smtpDone = apart.stored.flatMap((s) => s.ids).filter((id) => !api.has(id) && !notFinal.has(id)).length
    + apart.failed.filter((f) => !api.has(f.id) && f.note.outcome === 'set-aside').length;
  const retry = apart.failed.filter((f) => f.note.outcome === 'retry').map((f) => ({ id: f.id, attempts: f.note.attempts }));
  // Deferred messages wait as long as after a first failed try, uncounted.
  for (const id of apart.deferred) retry.push({ id, attempts: 1 });
  return { result, smtpDone, retry };
}
