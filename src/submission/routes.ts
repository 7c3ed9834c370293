import type { RouteRegistry } from '../http/registry.js';
import { INBOUND_BODY_LIMIT } from '../ingest/schemas.js';
import type { SendService } from './api.js';
import { sendBody, type SendBody } from './schemas.js';

/** POST /v1/mail/send: the API face of submission. */
export function submissionRoutes({ registry, send }: { registry: RouteRegistry; send: SendService }) {
  registry.add<SendBody>({
    method: 'post', path: '/v1/mail/send',
    summary: 'Send an email from a mailbox or a sending alias (answered once durably committed; delivered asynchronously)',
    permission: 'write', durableByHandler: true, bodyLimit: INBOUND_BODY_LIMIT, body: sendBody, errors: [413, 415, 422, 429],
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'accepted', message_id: await send.send(key.tenantId, body) };
    },
  });
}
