import test from 'ava';
import { SNIPPET_CHARS, snippetOf } from '../../src/emails/text.js';

test('a snippet collapses whitespace and keeps at most SNIPPET_CHARS characters, never half a surrogate pair', (t) => {
  t.is(snippetOf('  Hello \r\n\r\n  world\t! '), 'Hello world !');
  t.is(snippetOf('a'.repeat(SNIPPET_CHARS + 50)), 'a'.repeat(SNIPPET_CHARS));
  // Characters, not UTF-16 units: 200 emoji are 400 units and all of them stay.
  t.is(snippetOf('😀'.repeat(SNIPPET_CHARS + 5)), '😀'.repeat(SNIPPET_CHARS));
  // A pair that would straddle the limit is left out whole.
  t.is(snippetOf(`${'a'.repeat(SNIPPET_CHARS - 1)}😀z`), `${'a'.repeat(SNIPPET_CHARS - 1)}😀`);
  t.is(snippetOf(`${'a'.repeat(SNIPPET_CHARS)}😀`), 'a'.repeat(SNIPPET_CHARS));
  // A lone surrogate (broken input) counts as one character, as Array.from counts it.
  t.is(Array.from(snippetOf('\ud83d'.repeat(SNIPPET_CHARS + 10))).length, SNIPPET_CHARS);
});
