import type { RouteRegistry } from '../http/registry.js';
import { backlogFullError } from './backlog-limit.js';
import { normalizeInbound } from './normalize.js';
import { INBOUND_BODY_LIMIT, inboundBody, type InboundBody } from './schemas.js';
import type { Ingest } from './ports.js';

/** POST /v1/mail/inbound: the API face of ingestion. */
export function ingestRoutes({ registry, ingest }: { registry: RouteRegistry; ingest: Ingest }) {
  registry.add<InboundBody>({
    method: 'post', path: '/v1/mail/inbound', summary: 'Accept an inbound email (answered once durably committed; stored asynchronously)',
    permission: 'inbound', rateLimit: 'inbound', durableByHandler: true, bodyLimit: INBOUND_BODY_LIMIT, body: inboundBody, errors: [409, 413, 415, 429, 503],
    async handler(ctx, { key, body }) {
      // Storage is far behind: refused for now rather than acknowledged and invisible for minutes.
      const wait = ingest.backlogFull();
      if (wait !== null) throw backlogFullError(wait);
      await ingest.acceptMessage(key.tenantId, normalizeInbound(body));
      ctx.body = { status: 'accepted', message_id: body.message_id };
    },
  });
}
