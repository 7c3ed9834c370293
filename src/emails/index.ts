import type { Core } from '../core.js';
import type { Trx } from '../db/connection.js';
import { createIngest } from '../ingest/index.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Mailboxes } from '../mailboxes/index.js';
import { createEventRecorder, type EventRecorder } from '../webhooks/events.js';
import { createMailChanges } from './mail-changes.js';
import { createChangeRelay } from './postgres/mail-change-relay.js';
import { createEmailFiles } from './files.js';
import { folderStore } from '../mailstore/folder-store.js';
import { createLinkSigner, linkKey } from './links.js';
import { createMarkers } from '../mailstore/markers.js';
import { emailRoutes } from './routes.js';
import { createEmailService } from './service.js';
import { createEmailStore } from './store.js';

const PURGE_CHUNK = 500;

/**
 * Wires stored email and its ingestion: the store, update markers (shared with the storage
 * thread, whose writer stores the copies), the reading service and routes, attachment links signed with a key derived
 * from the install secret, and the cleanup of stored mail when mailboxes are deleted. `start` and
 * `stop` run the ingest worker with the app.
 */
export function installEmails(core: Core, deps: { resolve: RecipientResolver; events?: EventRecorder; mailboxes?: Pick<Mailboxes, 'onMailboxesDeleted'>; parserThreads?: number }) {
  const { db, clock, config } = core;
  const events = deps.events ?? createEventRecorder({ clock, backend: core.backend });
  const store = createEmailStore(core.backend);
  const markers = createMarkers(clock, (x) => store.maxMarker(x));
  // On PostgreSQL, changes are also told to (and heard from) the other nodes on the database.
  const relay = core.session ? createChangeRelay(core.session, core.logger) : null;
  const changes = createMailChanges(relay ? (ids) => relay.publish(ids) : undefined);
  const ingestion = createIngest(core, { resolve: deps.resolve, events, markers, onStored: (mailboxIds) => changes.committed(mailboxIds), parserThreads: deps.parserThreads });
  const { ingest, store: ingestStore, blobs } = ingestion;
  const service = createEmailService({ db, backend: core.backend, store, markers, events, clock, changes });
  const signer = createLinkSigner(linkKey(core.installSecret));
  const files = createEmailFiles({ db, store, blobs, signer, clock, publicUrl: config.publicUrl });
  emailRoutes({ registry: core.registry, emails: service, files });

  /**
   * Removes the stored mail of deleted mailboxes, inside the deleting transaction: its contents,
   * attachments and index entries go, and each email becomes a tombstone for sync (a client that
   * synced it must learn it is gone, as for a deleted email).
   */
  async function purgeMailboxes(trx: Trx, mailboxIds: number[]): Promise<void> {
    const ids = await store.idsInMailboxes(trx, mailboxIds);
    const inboundIds = new Set<number>();
    await markers.ready(trx);
    const now = clock.now();
    for (let i = 0; i < ids.length; i += PURGE_CHUNK) {
      const part = ids.slice(i, i + PURGE_CHUNK);
      for (const id of await store.inboundOf(trx, part)) inboundIds.add(id);
      await store.tombstone(trx, part, now, () => markers.next());
    }
    await markers.flush(trx);
    await ingestStore.dropReservations(trx, mailboxIds);
    await folderStore.removeOfMailboxes(trx, mailboxIds);
    // Raw files of dropped rows are left to the orphan sweep: this transaction may still roll back.
    await ingestStore.dropUnreferenced(trx, [...inboundIds]);
  }
  deps.mailboxes?.onMailboxesDeleted(purgeMailboxes);

  return {
    /** The one ingestion path (SMTP calls acceptRaw and overQuota on it). */
    ingest,
    /** The delivery pipeline's parser (mailparser and mailauth, in threads when built). */
    parser: ingestion.parser,
    service,
    files,
    store,
    /** Update markers of this thread's writes (IMAP flags, moves and copies take theirs here). */
    markers,
    /** Committed changes of mail by mailbox, made here or (PostgreSQL) on another node: IMAP IDLE wakes on them. */
    changes,
    /** Removes stored mail of mailboxes (registered as a mailbox-deletion hook when mailboxes are given). */
    purgeMailboxes,
    /** Listens for other nodes' changes (PostgreSQL), starts the ingest worker and its storage thread (resuming what a previous run left queued). */
    async start() {
      await relay?.listen(changes);
      await ingestion.start();
    },
    /** Stops the ingest worker after its current batch, then its storage thread. */
    stop: () => ingestion.stop(),
  };
}
export type Emails = ReturnType<typeof installEmails>;
