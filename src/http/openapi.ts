import type { RouteSpec } from './registry.js';
import type { JsonSchema } from './validate.js';

const REASONS: Record<number, string> = {
  400: 'Bad request', 401: 'API key invalid or missing', 403: 'Permission or plan missing', 404: 'Not found in the caller\'s scope',
  405: 'Method not allowed', 409: 'Already exists', 413: 'Body too large', 415: 'Body is not JSON', 422: 'Validation failure',
  429: 'Cooldown or rate limit in force',
};

const errorBody = {
  type: 'object',
  required: ['status', 'reason'],
  properties: { status: { const: 'error' }, reason: { type: 'string' } },
};

function parameters(schema: JsonSchema | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: s }));
}

/** The OpenAPI 3.1 description of every registered operation, built from the validating schemas. */
export function buildOpenApi(specs: readonly RouteSpec[], serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const s of specs) {
    const responses: Record<string, unknown> = { 200: { description: 'Success' } };
    // Every keyed route has the per-key rate limit (429); every body is read with a size limit (413) as JSON (415).
    const codes = new Set([
      ...(s.permission === false ? [] : [401, 403, 429]), ...(s.body ? [413, 415] : []), ...(s.body || s.query || s.params ? [422] : []), ...(s.errors ?? []),
    ]);
    for (const code of [...codes].sort()) {
      responses[code] = { description: REASONS[code] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    (paths['/api' + s.path] ??= {})[s.method] = {
      summary: s.summary,
      operationId: `${s.method}${s.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(s.permission === false ? { security: [] } : { 'x-permission': s.permission }),
      ...(s.plan ? { 'x-requires-plan': true } : {}),
      parameters: [...parameters(s.params, 'path'), ...parameters(s.query, 'query')],
      ...(s.body ? { requestBody: { required: true, content: { 'application/json': { schema: s.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Mailstead API', version: '1.0.0', description: 'Domains, mailboxes, aliases, inbound email, inbox reading and webhooks.' },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }, { apiKey: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      },
      schemas: { Error: errorBody },
    },
    paths,
  };
}
