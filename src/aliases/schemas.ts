/** `goto`: a comma-separated string or an array of addresses. */
const goto = {
  type: ['string', 'array'], items: { type: 'string', maxLength: 320 }, maxItems: 1000, maxLength: 20_000,
  description: 'Destinations: a comma-separated string or an array of addresses (at most 50 after duplicates are removed)',
} as const;

/** Most aliases in one bulk create or bulk delete request. */
export const MAX_ALIASES_PER_REQUEST = 100;

/** POST /v1/create/alias */
export const createAliasBody = {
  type: 'object',
  required: ['Domain', 'Params'],
  properties: {
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['goto'],
      properties: {
        address: { type: 'string', maxLength: 320, description: 'The alias address on Domain; omitted for the catch-all' },
        goto,
        catch_all: { type: 'boolean' },
        sender_allowed: { type: 'boolean' },
      },
    },
  },
} as const;
export interface CreateAliasBody {
  Domain: string;
  Params: { address?: string; goto: string | string[]; catch_all?: boolean; sender_allowed?: boolean };
}

/** POST /v1/create/alias/bulk */
export const createAliasBulkBody = {
  type: 'object',
  required: ['Domain', 'Params'],
  properties: {
    Domain: { type: 'string', format: 'mailstead-hostname' },
    Params: {
      type: 'object',
      required: ['aliases'],
      properties: {
        aliases: {
          type: 'array', minItems: 1, maxItems: MAX_ALIASES_PER_REQUEST,
          items: {
            type: 'object',
            required: ['address', 'goto'],
            properties: { address: { type: 'string', format: 'mailstead-email' }, goto },
          },
        },
      },
    },
  },
} as const;
export interface CreateAliasBulkBody { Domain: string; Params: { aliases: Array<{ address: string; goto: string | string[] }> } }

/** POST /v1/edit/alias */
export const editAliasBody = {
  type: 'object',
  required: ['address'],
  properties: {
    address: { type: 'string', minLength: 1, maxLength: 320, description: 'The alias address, or @<domain> for the catch-all' },
    goto,
    active: { type: 'boolean' },
    sender_allowed: { type: 'boolean' },
  },
} as const;
export interface EditAliasBody { address: string; goto?: string | string[]; active?: boolean; sender_allowed?: boolean }

/** GET /v1/list/alias */
export const listAliasQuery = {
  type: 'object',
  required: ['domain'],
  properties: { domain: { type: 'string', format: 'mailstead-hostname' } },
} as const;
export interface ListAliasQuery { domain: string }

/** POST /v1/delete/alias/bulk */
export const deleteAliasesBody = {
  type: 'object',
  required: ['Aliases'],
  properties: {
    Aliases: {
      type: 'array', minItems: 1, maxItems: MAX_ALIASES_PER_REQUEST, uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 320, description: 'An alias address, or @<domain> for a catch-all' },
    },
  },
} as const;
export interface DeleteAliasesBody { Aliases: string[] }
