import type { Core } from '../core.js';
import type { Emails } from '../emails/index.js';
import { createFolderMessages } from '../emails/folder-messages.js';
import type { SpamTraining } from '../spam/training.js';
import { createLockout } from '../mailboxes/lockout.js';
import { createMailboxLogins } from '../mailboxes/logins.js';
import { appendCommands } from './append.js';
import { authCommands } from './auth.js';
import { copyMoveCommands } from './copy-move.js';
import { enableCommands } from './enable.js';
import { expungeCommands } from './expunge.js';
import { fetchCommands } from './fetch.js';
import { idleCommands } from './idle.js';
import { createIdleWatch } from './idle-watch.js';
import { mailboxCommands } from './mailboxes.js';
import { createMailstore } from './mailstore.js';
import { contextCommands, updateLiveSearches } from './context.js';
import { quotaCommands } from './quota.js';
import { RecentClaims } from './recent.js';
import { matching, searchCommands } from './search.js';
import { selectCommands } from './select.js';
import { sortCommands } from './sort.js';
import { threadCommands } from './thread.js';
import { createImapListeners, type TlsSource } from './server.js';
import type { CommandSpec } from './session.js';
import { storeCommands } from './store.js';

/** Sessions one mailbox may have open at once (DECISIONS.md section 14). */
export const MAX_SESSIONS_PER_MAILBOX = 20;

/** Every command, by name. */
const COMMANDS = new Map<string, CommandSpec>(Object.entries({
  ...authCommands, ...enableCommands, ...mailboxCommands, ...selectCommands, ...fetchCommands, ...storeCommands,
  ...searchCommands, ...copyMoveCommands, ...expungeCommands, ...appendCommands, ...idleCommands, ...quotaCommands, ...sortCommands, ...threadCommands, ...contextCommands,
}));

/**
 * IMAP4rev2 (DECISIONS.md section 14): the listeners on MAILSTEAD_IMAP_PORT (implicit TLS) and
 * MAILSTEAD_IMAP_STARTTLS_PORT, over the same stored mail as the REST API, with the login lock-out
 * shared with submission and the certificate of every TLS listener.
 */
export function installImap(core: Core, deps: { emails: Emails; tls: TlsSource; training?: SpamTraining }) {
  const { db, clock, config, logger } = core;
  const messages = createFolderMessages({ db, store: deps.emails.store, markers: deps.emails.markers, clock, service: deps.emails.service, changes: deps.emails.changes, training: deps.training });
  const store = createMailstore({
    messages, files: deps.emails.files, logins: createMailboxLogins({ db }), lockout: createLockout({ db, clock }), hostname: config.hostname,
  });
  const perMailbox = new Map<number, number>();
  const idle = createIdleWatch({ changes: deps.emails.changes, changedMailboxes: (tenantId, after) => messages.changedMailboxes(tenantId, after), logger, pollMs: config.imapIdlePollMs });
  const listeners = createImapListeners({
    host: config.smtpHost, port: config.imapPort, starttlsPort: config.imapStarttlsPort, tls: deps.tls, logger,
    deps: {
      store, logger, commands: COMMANDS, idle, recent: new RecentClaims(),
      updateLiveSearches: (s, removed) => updateLiveSearches(s, removed, async (program) => (await matching(s, program, false)).hits.map((e) => e.uid)),
      claim(id) {
        const n = perMailbox.get(id) ?? 0;
        if (n >= MAX_SESSIONS_PER_MAILBOX) return false;
        perMailbox.set(id, n + 1);
        return true;
      },
      release(id) {
        const n = (perMailbox.get(id) ?? 1) - 1;
        if (n <= 0) perMailbox.delete(id); else perMailbox.set(id, n);
      },
    },
  });
  return {
    listen: listeners.listen,
    async close() { idle.close(); await listeners.close(); },
    messages,
    /** The wake-ups of idling sessions (its poll interval can be set). */
    idle,
  };
}
export type Imap = ReturnType<typeof installImap>;
