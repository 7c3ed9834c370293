import type { Core } from '../core.js';
import type { installDomains } from '../domains/index.js';
import { createDeletionService, deletionTasks } from './deletion.js';
import { createDeletionHooks } from './hooks.js';
import { verifyPassword } from './passwords.js';
import { createPasswordSweep } from './redaction.js';
import { mailboxRoutes } from './routes.js';
import { createMailboxService } from './service.js';
import { createMailboxStore } from './store.js';
import { mailboxCreateTasks } from './tasks.js';

/** Cron job name of the password redaction sweep. */
export const REDACTION_JOB = 'mailboxes.redact-passwords';

/** Wires the mailboxes capability: store, service, task handlers, routes and the password sweep. */
export function installMailboxes(core: Core, { domains }: { domains: ReturnType<typeof installDomains> }) {
  const { db, queue, tenants, clock, config, logger, registry, cron } = core;
  const store = createMailboxStore();
  const hooks = createDeletionHooks();
  const service = createMailboxService({ db, store, domainStore: domains.store, queue, tenants, clock, config });
  const deletion = createDeletionService({ db, queue, tenants });
  queue.register(
    ...mailboxCreateTasks({ db, store, tenants, clock }),
    ...deletionTasks({ store, domainStore: domains.store, hooks, logger }),
  );
  mailboxRoutes({ registry, mailboxes: service, deletion, queue });
  const sweepPasswords = createPasswordSweep({ db, store, clock });
  cron.add({ name: REDACTION_JOB, schedule: '*/5 * * * *', run: sweepPasswords });
  return {
    store,
    service,
    /** Registers cleanup of another capability's rows for deleted mailboxes (inside the delete transaction). */
    onMailboxesDeleted: hooks.onMailboxesDeleted,
    /** Registers cleanup of another capability's rows for deleted domains (inside the delete transaction). */
    onDomainsDeleted: hooks.onDomainsDeleted,
    /** Checks a mailbox password against its stored scrypt hash. */
    verifyPassword,
    /** Redacts plain passwords of tasks finished 24 hours ago (the cron job; callable for tests). */
    sweepPasswords,
  };
}
/** What the mailboxes capability offers to later ones. */
export type Mailboxes = ReturnType<typeof installMailboxes>;
