import type { Core } from '../core.js';
import type { Mailboxes } from '../mailboxes/index.js';
import { sieveRoutes } from './routes.js';
import { createSieveStore } from './store.js';
import { createVacationStore } from './vacation-store.js';

/** Cron job name of the sweep of vacation replies whose period has ended. */
export const VACATION_SWEEP_JOB = 'sieve.vacation-sweep';

/** Wires Sieve storage: scripts, vacation settings and replies, the REST routes and the sweep. */
export function installSieveStore(core: Core, { mailboxes }: { mailboxes: Pick<Mailboxes, 'onMailboxesDeleted'> }) {
  const { db, clock, registry, cron } = core;
  const scripts = createSieveStore(db, () => clock.now());
  const vacation = createVacationStore(db);
  sieveRoutes({ registry, db, scripts, vacation, clock });
  // The foreign keys cascade too; deleting here first keeps the mailbox delete independent of that.
  mailboxes.onMailboxesDeleted(async (trx, ids) => {
    await trx.deleteFrom('sieve_scripts').where('mailbox_id', 'in', ids).execute();
    await trx.deleteFrom('vacation_settings').where('mailbox_id', 'in', ids).execute();
    await trx.deleteFrom('vacation_replies').where('mailbox_id', 'in', ids).execute();
  });
  cron.add({ name: VACATION_SWEEP_JOB, schedule: '17 * * * *', run: async () => { await vacation.sweep(clock.now()); } });
  return { scripts, vacation };
}
export type SieveStorage = ReturnType<typeof installSieveStore>;
