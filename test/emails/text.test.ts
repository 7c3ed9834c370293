import test from 'ava';
import { SNIPPET_CHARS, snippetOf } from '../../src/message/text.js';

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

/** The snippet as it was first written (regular expressions), the reference for the one-pass version. */
function referenceSnippet(text: string): string {
  const collapsed = text.slice(0, SNIPPET_CHARS * 4).replace(/\s+/g, ' ').trim();
  const chars = Array.from(collapsed);
  return chars.length <= SNIPPET_CHARS ? collapsed : chars.slice(0, SNIPPET_CHARS).join('');
}

test('the snippet equals whitespace collapsed by a regular expression, for every kind of whitespace and surrogate', (t) => {
  const pieces = ['a', 'Zz', 'é', '😀', '\ud83d', '\ude00', ' ', '  ', '\t', '\r\n', '\u000b', '\f', '\u00a0', '\u1680', '\u2000', '\u200a',
    '\u200b', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff', '\u0085', 'word ', '.'];
  let seed = 7;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  for (let n = 0; n < 3000; n++) {
    let text = '';
    const length = next() % 900;
    while (text.length < length) text += pieces[next() % pieces.length];
    t.is(snippetOf(text), referenceSnippet(text), JSON.stringify(text));
  }
  const line = 'The quick brown fox jumps over the lazy dog. ';
  t.is(snippetOf(Array.from({ length: 66 }, () => line).join('\r\n')), referenceSnippet(Array.from({ length: 66 }, () => line).join('\r\n')));
});
