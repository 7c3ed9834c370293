// Tag sets shared by several tests (RFC 5228 2.7, RFC 5231 relational, RFC 5233 subaddress, RFC 5260 index).
import type { TagSpec } from './spec.js';

export const COMPARATOR_TAGS: Record<string, TagSpec> = { comparator: { arg: 'string', group: 'comparator' } };

export const MATCH_TAGS: Record<string, TagSpec> = {
  is: { group: 'match' },
  contains: { group: 'match' },
  matches: { group: 'match' },
  value: { arg: 'string', group: 'match', ext: 'relational' },
  count: { arg: 'string', group: 'match', ext: 'relational' },
};

export const ADDRESS_PART_TAGS: Record<string, TagSpec> = {
  all: { group: 'address-part' },
  localpart: { group: 'address-part' },
  domain: { group: 'address-part' },
  user: { group: 'address-part', ext: 'subaddress' },
  detail: { group: 'address-part', ext: 'subaddress' },
};

export const INDEX_TAGS: Record<string, TagSpec> = {
  index: { arg: 'number', ext: 'index' },
  last: { ext: 'index' },
};

export const MATCHING = { ...COMPARATOR_TAGS, ...MATCH_TAGS };
