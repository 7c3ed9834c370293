import { sql } from 'kysely';
import type { Db } from '../db/connection.js';

/** `results` of an import task (DECISIONS.md section 20), while it runs and after. */
export interface ImportResults {
  status: 'running' | 'completed' | 'failed';
  /** Folders the import copies into. */
  folders: number;
  /** Messages found in the source (for uploads: read so far, all of them once completed). */
  messages_total: number;
  messages_imported: number;
  /** Already there (same Message-ID, date and size in that folder), not copied again. */
  messages_skipped: number;
  /** Bytes imported. */
  bytes: number;
  error?: string;
}

/**
 * The counters of one run of an import task. A resumed task starts again from the first message
 * and skips what the run before it stored; the counts that run recorded (in the same transaction
 * as the messages, so they agree after a crash) carry over, and those messages are not counted
 * as skipped a second time.
 */
export function createProgress(before: Partial<ImportResults> | null) {
  const carried = { imported: before?.messages_imported ?? 0, bytes: before?.bytes ?? 0 };
  const run = { imported: 0, skipped: 0, bytes: 0, seen: 0 };
  let folders = 0;
  let total: number | null = null;
  const results = (status: ImportResults['status'] = 'running'): ImportResults => {
    const skipped = Math.max(0, run.skipped - carried.imported);
    const imported = carried.imported + run.imported;
    return {
      status, folders, messages_total: Math.max(total ?? run.seen, imported + skipped), messages_imported: imported,
      messages_skipped: skipped, bytes: carried.bytes + run.bytes,
    };
  };
  return {
    results,
    /** Sets the number of folders and, when the source knows it up front, of messages. */
    plan(folderCount: number, messages: number | null) { folders = folderCount; total = messages; },
    addFolder() { folders++; },
    seen(n = 1) { run.seen += n; },
    skipped(n = 1) { run.skipped += n; },
    imported(n: number, bytes: number) { run.imported += n; run.bytes += bytes; },
    /** Writes the running results on the task row (inside the caller's transaction when given). */
    save: (db: Db, taskId: number) => sql`UPDATE tasks SET result = ${JSON.stringify(results())} WHERE id = ${taskId}`.execute(db).then(() => undefined),
  };
}
export type Progress = ReturnType<typeof createProgress>;
