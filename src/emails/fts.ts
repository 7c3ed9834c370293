/**
 * User search text as an FTS5 MATCH expression (DECISIONS.md section 8): words are AND-ed,
 * "quoted phrases" stay phrases, the last bare word is a prefix. Every term is emitted as an FTS5
 * string ("..." with inner quotes doubled), so no user character ever reaches FTS5 syntax: `*`,
 * `-`, `:`, `^`, parentheses, NEAR/AND/OR/NOT and unbalanced quotes are all just text. Terms with
 * no letter or digit (which the tokenizer would drop) are left out. Returns null when nothing
 * searchable remains.
 *
 * PostgreSQL counterpart: the same term list as a tsquery built with `phraseto_tsquery` per term
 * joined by `&`, and `:*` on the last bare word, over a tsvector column of the same four fields.
 */
export function ftsMatch(input: string): string | null {
  const terms: Array<{ text: string; phrase: boolean }> = [];
  // FTS5 reads the expression as a C string, so a NUL inside a term would end it mid-string (a
  // syntax error): NUL separates words like a space does.
  const text = input.replace(/\0/g, ' ');
  const re = /"([^"]*)"?|([^\s"]+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const phrase = m[1] !== undefined;
    const term = phrase ? m[1] : m[2];
    if (/[\p{L}\p{N}]/u.test(term)) terms.push({ text: term, phrase });
  }
  if (terms.length === 0) return null;
  const last = terms.length - 1;
  return terms
    .map((t, i) => `"${t.text.replace(/"/g, '""')}"${i === last && !t.phrase ? '*' : ''}`)
    .join(' AND ');
}
