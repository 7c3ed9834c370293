import type { Db } from '../db/connection.js';
import { forbidden, notFound } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import { idSchema } from '../http/validate.js';
import type { ApiKey } from '../tenants/service.js';
import { setAsideStore, type SetAsideMessage } from '../mailstore/set-aside.js';
import type { IngestStore } from '../mailstore/inbound-store.js';

/** Most set-aside messages one list answers (oldest first). */
export const SET_ASIDE_LIST_MAX = 1000;

/**
 * What an operator does with set-aside messages (set-aside.ts), for the API and the CLI alike:
 * list them, queue one again for one more try, or delete one and its bytes.
 */
export function createSetAsideService(deps: {
  db: Db; store: IngestStore;
  /** Removes a raw file the database no longer names (SQLite mail kept outside its row). */
  removeRaw(name: string): Promise<void>;
  /** Told after a retry queued a message (the worker looks at once; otherwise at its next poll). */
  requeued?: () => void;
}) {
  return {
    list: (limit = SET_ASIDE_LIST_MAX): Promise<SetAsideMessage[]> => setAsideStore.list(deps.db, limit),
    count: () => setAsideStore.count(deps.db),
    /** False when no message of that id is set aside. */
    async retry(id: number): Promise<boolean> {
      const queued = await setAsideStore.retry(deps.db, id);
      if (queued) deps.requeued?.();
      return queued;
    },
    /** False when no message of that id is set aside. */
    async discard(id: number): Promise<boolean> {
      const gone = await deps.db.transaction().execute((trx) => setAsideStore.discard(trx, deps.store, id));
      if (gone?.rawPath) await deps.removeRaw(gone.rawPath);
      return gone !== null;
    },
  };
}
export type SetAsideService = ReturnType<typeof createSetAsideService>;

const messageParams = { type: 'object', required: ['message'], properties: { message: idSchema } } as const;
const listQuery = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: SET_ASIDE_LIST_MAX } } } as const;

/** Set-aside mail belongs to no tenant's view: the operator's (administrators') alone. */
function administrator(key: ApiKey): void {
  if (!key.isAdmin) throw forbidden('Only administrator keys may see or change set-aside mail');
}

/** GET /v1/ingest/set-aside and the retry and discard of one message, for administrator keys. */
export function setAsideRoutes({ registry, service }: { registry: RouteRegistry; service: SetAsideService }) {
  registry.add<unknown, { limit?: number }>({
    method: 'get', path: '/v1/ingest/set-aside', summary: 'Inbound messages set aside after failing every try to store them (administrators)',
    permission: 'read', query: listQuery, errors: [403],
    async handler(ctx, { key, query }) {
      administrator(key);
      ctx.body = { status: 'success', data: await service.list(query.limit) };
    },
  });

  registry.add<unknown, unknown, { message: number }>({
    method: 'post', path: '/v1/ingest/set-aside/{message}/retry', summary: 'Queue a set-aside message again for one more try (administrators)',
    permission: 'write', params: messageParams, errors: [403, 404],
    async handler(ctx, { key, params }) {
      administrator(key);
      if (!(await service.retry(params.message))) throw notFound('No set-aside message with that id');
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, { message: number }>({
    method: 'delete', path: '/v1/ingest/set-aside/{message}', summary: 'Delete a set-aside message and its bytes (administrators)',
    permission: 'write', params: messageParams, errors: [403, 404],
    async handler(ctx, { key, params }) {
      administrator(key);
      if (!(await service.discard(params.message))) throw notFound('No set-aside message with that id');
      ctx.body = { status: 'success' };
    },
  });
}
