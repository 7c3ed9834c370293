import type { RouteRegistry } from '../http/registry.js';
import {
  createWebhookBody, deliveriesQuery, deliveryParams, updateWebhookBody, webhookParams,
  type CreateWebhookBody, type DeliveriesQuery, type DeliveryParams, type UpdateWebhookBody, type WebhookParams,
} from './schemas.js';
import type { WebhookService } from './service.js';

/** The web face of webhooks: CRUD (SPEC.md), rotation, the delivery log and replay (DECISIONS.md section 10). */
export function webhookRoutes({ registry, webhooks }: { registry: RouteRegistry; webhooks: WebhookService }) {
  registry.add<CreateWebhookBody>({
    method: 'post', path: '/v1/webhooks', summary: 'Register a webhook; the signing secret is shown only here',
    permission: 'webhook', body: createWebhookBody,
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', data: await webhooks.create(key, body) };
    },
  });

  registry.add({
    method: 'get', path: '/v1/webhooks', summary: 'List the account\'s webhooks', permission: 'webhook',
    async handler(ctx, { key }) {
      ctx.body = { status: 'success', data: await webhooks.list(key) };
    },
  });

  registry.add<UpdateWebhookBody, unknown, WebhookParams>({
    method: 'patch', path: '/v1/webhooks/{webhook}', summary: 'Change a webhook\'s url, events or is_active',
    permission: 'webhook', params: webhookParams, body: updateWebhookBody, errors: [404],
    async handler(ctx, { key, body, params }) {
      await webhooks.update(key, params.webhook, body);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, WebhookParams>({
    method: 'delete', path: '/v1/webhooks/{webhook}', summary: 'Delete a webhook and its queued deliveries',
    permission: 'webhook', params: webhookParams, errors: [404],
    async handler(ctx, { key, params }) {
      await webhooks.remove(key, params.webhook);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<unknown, unknown, WebhookParams>({
    method: 'post', path: '/v1/webhooks/{webhook}/rotate-secret', summary: 'New signing secret; the old one also signs for 24 hours',
    permission: 'webhook', params: webhookParams, errors: [404],
    async handler(ctx, { key, params }) {
      ctx.body = { status: 'success', data: await webhooks.rotate(key, params.webhook) };
    },
  });

  registry.add<unknown, DeliveriesQuery, WebhookParams>({
    method: 'get', path: '/v1/webhooks/{webhook}/deliveries', summary: 'Recent deliveries with their attempts (status code, latency, error)',
    permission: 'webhook', params: webhookParams, query: deliveriesQuery, errors: [404],
    async handler(ctx, { key, params, query }) {
      ctx.body = { status: 'success', ...(await webhooks.deliveries(key, params.webhook, query)) };
    },
  });

  registry.add<unknown, unknown, DeliveryParams>({
    method: 'post', path: '/v1/webhooks/{webhook}/deliveries/{delivery}/replay', summary: 'Send a delivery again (same X-Webhook-Id)',
    permission: 'webhook', params: deliveryParams, errors: [404, 409],
    async handler(ctx, { key, params }) {
      await webhooks.replay(key, params.webhook, params.delivery);
      ctx.body = { status: 'success' };
    },
  });
}
