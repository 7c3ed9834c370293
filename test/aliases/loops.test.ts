import test from 'ava';
import { findLoop, type AliasGraph } from '../../src/aliases/loops.js';

const graph = (aliases: Record<string, string[]>, mailboxes: string[] = ['ann@a.test']): AliasGraph => ({
  mailboxes: new Set(mailboxes),
  aliases: new Map(Object.entries(aliases)),
  hostnames: new Set(['a.test', 'b.test']),
});
const change = (address: string, goto: string[]) => new Map([[address, goto]]);

const cases: Array<[string, AliasGraph, Map<string, string[]>, string[] | null]> = [
  ['to a mailbox', graph({}), change('x@a.test', ['ann@a.test']), null],
  ['to itself', graph({}), change('x@a.test', ['x@a.test']), ['x@a.test', 'x@a.test']],
  ['through another alias', graph({ 'y@b.test': ['x@a.test'] }), change('x@a.test', ['y@b.test']), ['x@a.test', 'y@b.test', 'x@a.test']],
  ['through a chain', graph({ 'y@a.test': ['z@a.test'], 'z@a.test': ['ann@a.test', 'x@a.test'] }), change('x@a.test', ['ann@a.test', 'y@a.test']), ['x@a.test', 'y@a.test', 'z@a.test', 'x@a.test']],
  ['an existing loop elsewhere is not this alias\'s loop', graph({ 'p@a.test': ['q@a.test'], 'q@a.test': ['p@a.test'] }), change('x@a.test', ['p@a.test']), null],
  ['external destinations end the path', graph({}), change('x@a.test', ['x@elsewhere.example']), null],
  ['a catch-all to an unknown address of its own domain', graph({}), change('@a.test', ['typo@a.test']), ['@a.test', 'typo@a.test', '@a.test']],
  ['a catch-all to a mailbox', graph({}), change('@a.test', ['ann@a.test']), null],
  ['an alias to an unknown address whose catch-all leads back', graph({ '@b.test': ['x@a.test'] }), change('x@a.test', ['nobody@b.test']), ['x@a.test', 'nobody@b.test', '@b.test', 'x@a.test']],
  ['a replaced goto no longer loops', graph({ 'y@a.test': ['x@a.test'], 'x@a.test': ['y@a.test'] }), change('x@a.test', ['ann@a.test']), null],
];

for (const [name, g, changes, expected] of cases) {
  test(`loops: ${name}`, (t) => {
    t.deepEqual(findLoop(g, changes), expected);
  });
}

test('loops: a batch whose members form a loop together', (t) => {
  const batch = new Map([['x@a.test', ['y@a.test']], ['y@a.test', ['x@a.test']]]);
  t.deepEqual(findLoop(graph({}), batch), ['x@a.test', 'y@a.test', 'x@a.test']);
});
