import type { Db } from '../db/connection.js';
import { createBlobStore } from './blobs.js';
import { createSetAsideService } from './set-aside-routes.js';
import { createIngestStore } from '../mailstore/inbound-store.js';

/** A command-line mistake (the CLI answers it with exit code 2). */
export type Usage = (message: string) => never;

/**
 * `mailstead set-aside list|retry ID|discard ID` (src/cli.ts): the operator's face of set-aside
 * mail (set-aside.ts) on either database, while the server runs. `list` prints the messages as one
 * JSON array (oldest first), `retry` prints `queued` (the running server's worker takes it at its
 * next poll), `discard` prints `discarded`. An unknown id is a usage error.
 */
export async function setAsideCommand(o: { db: Db; dataDir: string; verb: string | undefined; args: string[]; usage: Usage }): Promise<string> {
  const blobs = createBlobStore(o.dataDir);
  const service = createSetAsideService({
    db: o.db, store: createIngestStore(), removeRaw: (name) => blobs.remove(blobs.rawFile(name)),
  });
  if (o.verb === 'list') {
    if (o.args.length) o.usage('set-aside list takes no arguments');
    return JSON.stringify(await service.list());
  }
  if (o.args.length !== 1 || !/^[1-9][0-9]{0,15}$/.test(o.args[0])) o.usage(`set-aside ${o.verb} takes exactly one message ID (a positive integer)`);
  const id = Number(o.args[0]);
  if (o.verb === 'retry') {
    if (!(await service.retry(id))) o.usage(`no set-aside message ${id}`);
    return 'queued';
  }
  if (!(await service.discard(id))) o.usage(`no set-aside message ${id}`);
  return 'discarded';
}
