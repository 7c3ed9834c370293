import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/connection.js';
import type { Logger } from '../../logger.js';
import type { StoredMessage } from '../../inbound/message.js';
import type { IngestStore } from '../../mailstore/inbound-store.js';
import { ORPHAN_AGE_MS } from '../sweep.js';

/**
 * The hourly sweep on PostgreSQL: blob rows no attachment and no queued API message names any
 * more (their mail was purged, or refused after its blobs were written), once they are an hour
 * old; `then` (the file sweep) clears what this node's scratch directories kept. The age is
 * re-checked on rows a writer holds (pg-blobs.ts `touch`), so a blob being named again stays.
 */
export function createPgBlobSweep({ db, store, clock, logger, then }: {
  db: Db; store: IngestStore; clock: Clock; logger: Logger; then?: () => Promise<number>;
}) {
  return async function sweep(): Promise<number> {
    const limit = clock.now() - ORPHAN_AGE_MS;
    const queued = new Set<string>();
    for (const text of await store.queuedApiMessages(db)) {
      for (const a of (JSON.parse(text) as StoredMessage).attachments) queued.add(a.sha256);
    }
    const r = await sql`DELETE FROM blobs AS b WHERE b.created_at < ${limit}::bigint
      AND NOT EXISTS (SELECT 1 FROM attachments AS a WHERE a.sha256 = b.sha256)
      AND NOT (b.sha256 = ANY(${[...queued]}::text[]))`.execute(db);
    const removed = Number(r.numAffectedRows ?? 0);
    if (removed > 0) logger.info({ removed }, 'orphaned blob rows removed');
    return removed + ((await then?.()) ?? 0);
  };
}
