import test from 'ava';
import { MAX_ALIAS_DEPTH, resolveRecipient, type RecipientSnapshot } from '../../src/aliases/resolver.js';
import type { Resolution } from '../../src/inbound/types.js';

// Tenant 1 hosts a.test and b.test; tenant 2 hosts other.test.
function snapshot(o: {
  mailboxes?: Record<string, number>;
  aliases?: Record<string, string[] | { goto: string[]; active?: boolean; tenant?: number }>;
}): RecipientSnapshot {
  const domains = new Map([['a.test', { tenantId: 1 }], ['b.test', { tenantId: 1 }], ['other.test', { tenantId: 2 }]]);
  const mailboxes = new Map(Object.entries(o.mailboxes ?? {}).map(([addr, id]) => [addr, { id, tenantId: domains.get(addr.split('@')[1])!.tenantId }]));
  const aliases = new Map(Object.entries(o.aliases ?? {}).map(([addr, v]) => {
    const a = Array.isArray(v) ? { goto: v } : v;
    return [addr, { goto: a.goto, active: a.active ?? true, tenantId: a.tenant ?? domains.get(addr.split('@')[1])!.tenantId }];
  }));
  return { domains, mailboxes, aliases };
}

const deliver = (mailboxIds: number[], forwards: string[] = []): Resolution => ({ kind: 'deliver', tenantId: 1, mailboxIds, forwards });
const unknown: Resolution = { kind: 'unknown', tenantId: 1 };

const chain = (n: number) => {
  const aliases: Record<string, string[]> = {};
  for (let i = 0; i < n; i++) aliases[`c${i}@a.test`] = [`c${i + 1}@a.test`];
  return aliases;
};

const cases: Array<[string, Parameters<typeof snapshot>[0], string, Resolution]> = [
  ['a mailbox', { mailboxes: { 'ann@a.test': 7 } }, 'ann@a.test', deliver([7])],
  ['mailbox wins over an alias of the same address', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'ann@a.test': ['x@ext.example'] } }, 'ann@a.test', deliver([7])],
  ['mailbox wins over the catch-all', { mailboxes: { 'ann@a.test': 7 }, aliases: { '@a.test': ['x@ext.example'] } }, 'ann@a.test', deliver([7])],
  ['alias to a mailbox', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'info@a.test': ['ann@a.test'] } }, 'info@a.test', deliver([7])],
  ['alias to an external address is a forward', { aliases: { 'info@a.test': ['Boss@ext.example'.toLowerCase()] } }, 'info@a.test', deliver([], ['boss@ext.example'])],
  ['alias to mailboxes and forwards', { mailboxes: { 'ann@a.test': 7, 'bob@b.test': 8 }, aliases: { 'team@a.test': ['ann@a.test', 'bob@b.test', 'x@ext.example'] } }, 'team@a.test', deliver([7, 8], ['x@ext.example'])],
  ['inactive alias is ignored', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'info@a.test': { goto: ['ann@a.test'], active: false } } }, 'info@a.test', unknown],
  ['inactive alias falls back to the catch-all', { mailboxes: { 'ann@a.test': 7, 'all@a.test': 9 }, aliases: { 'info@a.test': { goto: ['ann@a.test'], active: false }, '@a.test': ['all@a.test'] } }, 'info@a.test', deliver([9])],
  ['chain of aliases', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'x@a.test': ['y@a.test'], 'y@a.test': ['z@b.test'], 'z@b.test': ['ann@a.test', 'f@ext.example'] } }, 'x@a.test', deliver([7], ['f@ext.example'])],
  ['duplicates removed', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'x@a.test': ['ann@a.test', 'y@a.test', 'f@ext.example'], 'y@a.test': ['ann@a.test', 'f@ext.example'] } }, 'x@a.test', deliver([7], ['f@ext.example'])],
  ['loop cut', { mailboxes: { 'ann@a.test': 7 }, aliases: { 'x@a.test': ['y@a.test', 'ann@a.test'], 'y@a.test': ['x@a.test'] } }, 'x@a.test', deliver([7])],
  ['loop with nothing else is unknown', { aliases: { 'x@a.test': ['y@a.test'], 'y@a.test': ['x@a.test'] } }, 'x@a.test', unknown],
  ['catch-all fallback', { mailboxes: { 'all@a.test': 9 }, aliases: { '@a.test': ['all@a.test'] } }, 'nobody@a.test', deliver([9])],
  ['catch-all to an alias chain', { mailboxes: { 'ann@b.test': 7 }, aliases: { '@a.test': ['team@a.test'], 'team@a.test': ['ann@b.test', 'f@ext.example'] } }, 'nobody@a.test', deliver([7], ['f@ext.example'])],
  ['catch-all pointing at an unknown address of its own domain does not loop', { aliases: { '@a.test': ['typo@a.test'] } }, 'nobody@a.test', unknown],
  ['inactive catch-all is ignored', { mailboxes: { 'all@a.test': 9 }, aliases: { '@a.test': { goto: ['all@a.test'], active: false } } }, 'nobody@a.test', unknown],
  ['catch-all of another domain does not apply', { mailboxes: { 'all@b.test': 9 }, aliases: { '@b.test': ['all@b.test'] } }, 'nobody@a.test', unknown],
  ['unknown address on a hosted domain', { mailboxes: { 'ann@a.test': 7 } }, 'bob@a.test', unknown],
  ['domain not hosted', { mailboxes: { 'ann@a.test': 7 } }, 'ann@elsewhere.example', { kind: 'not-hosted' }],
  ['another tenant\'s mailbox is forwarded, not delivered', { mailboxes: { 'eve@other.test': 5 }, aliases: { 'x@a.test': ['eve@other.test'] } }, 'x@a.test', deliver([], ['eve@other.test'])],
  ['another tenant\'s address resolves for that tenant', { mailboxes: { 'eve@other.test': 5 } }, 'eve@other.test', { kind: 'deliver', tenantId: 2, mailboxIds: [5], forwards: [] }],
  ['a chain within the depth bound is followed', { mailboxes: { [`c${MAX_ALIAS_DEPTH}@a.test`]: 3 }, aliases: chain(MAX_ALIAS_DEPTH) }, 'c0@a.test', deliver([3])],
  ['a chain beyond the depth bound stops', { mailboxes: { [`c${MAX_ALIAS_DEPTH + 1}@a.test`]: 3 }, aliases: chain(MAX_ALIAS_DEPTH + 1) }, 'c0@a.test', unknown],
];

for (const [name, data, address, expected] of cases) {
  test(`resolver: ${name}`, (t) => {
    t.deepEqual(resolveRecipient(snapshot(data), address), expected);
  });
}
