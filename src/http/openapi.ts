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

/** Descriptions of the tags that operations carry. */
const TAGS: Record<string, string> = {
  legacy: 'Legacy request variant B under /api/legacy (SPEC.md Versioning): the key travels as `key` in the JSON body of a POST or the query of a GET. Deprecated: new clients use the header-keyed operations.',
};

/** The OpenAPI 3.1 description of every registered operation, built from the validating schemas. */
export function buildOpenApi(specs: readonly RouteSpec[], serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  const tagNames = new Set(specs.flatMap((s) => s.tags ?? []));
  for (const s of specs) {
    const responses: Record<string, unknown> = { 200: { description: 'Success' } };
    // Every keyed route has the per-key rate limit (429); every body is read with a size limit (413) as JSON (415).
    // A route whose refusals are 401 (legacy mailbox creates) has no 403 unless it names one.
    const keyed = s.permission === false ? [] : s.deniedStatus === 401 ? [401, 429] : [401, 403, 429];
    const codes = new Set([
      ...keyed, ...(s.body ? [413, 415] : []), ...(s.body || s.query || s.params ? [422] : []), ...(s.errors ?? []),
    ]);
    for (const code of [...codes].sort()) {
      responses[code] = { description: REASONS[code] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    (paths['/api' + s.path] ??= {})[s.method] = {
      summary: s.summary,
      operationId: `${s.method}${s.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(s.tags ? { tags: s.tags } : {}),
      ...(s.deprecated ? { deprecated: true } : {}),
      // Variant B's key is a field of the body or query schema below, not a header scheme.
      ...(s.permission === false || s.keyIn === 'legacy' ? { security: [] } : {}),
      ...(s.permission === false ? {} : { 'x-permission': s.permission }),
      ...(s.keyIn === 'legacy' ? { 'x-key-in': s.method === 'get' ? 'query' : 'body' } : {}),
      ...(s.plan ? { 'x-requires-plan': true } : {}),
      parameters: [...parameters(s.params, 'path'), ...parameters(s.query, 'query')],
      ...(s.body || s.uploads ? {
        requestBody: {
          required: true,
          content: {
            ...(s.body ? { 'application/json': { schema: s.body } } : {}),
            ...Object.fromEntries((s.uploads ?? []).map((t) => [t, { schema: { type: 'string', format: 'binary' } }])),
          },
        },
      } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Mailstead API', version: '1.0.0', description: 'Domains, mailboxes, aliases, inbound email, inbox reading and webhooks.' },
    servers: [{ url: serverUrl }],
    ...(tagNames.size > 0 ? { tags: [...tagNames].sort().map((name) => ({ name, ...(TAGS[name] ? { description: TAGS[name] } : {}) })) } : {}),
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
