import { sql, type RawBuilder } from 'kysely';
import { foldSearchText } from '../../message/search-fold.js';

/*
 * Section 8's `q` on PostgreSQL (DECISIONS.md section 17): the twin of fts.ts over a tsvector per
 * email (emails_fts.document, GIN-indexed). Both sides are folded here the same way before
 * PostgreSQL's parser sees them, so they split and fold as FTS5's unicode61 tokenizer does on
 * SQLite (runs of letters and digits, case and diacritics removed) whatever the cluster's locale:
 * PostgreSQL's own parser would keep `ann@sender.example` or `foo-bar` as tokens of their own, and
 * under the C locale lowercases ASCII only.
 */

/** PostgreSQL drops a lexeme longer than this (bytes); a term with one cannot be in any document. */
const MAX_LEXEME_BYTES = 2047;

/** A search as terms: each a phrase of folded words; `prefix` marks the last one's last word as a prefix. */
export interface PgSearch {
  phrases: string[];
  prefix: boolean;
}

/**
 * User search text as terms, by ftsMatch's rules (fts.ts): words AND-ed, "quoted phrases" kept
 * as phrases (an unclosed quote runs to the end), the last bare word a prefix, NUL a space, terms
 * without a letter or digit dropped. A bare word with inner punctuation (`foo-bar`) is a phrase
 * of its parts, as FTS5 reads it. Null when nothing searchable remains, or when a word is too long
 * to be indexed (no document holds it).
 */
export function pgSearch(input: string): PgSearch | null {
  const phrases: string[] = [];
  let prefix = false;
  const text = input.replace(/\0/g, ' ');
  const re = /"([^"]*)"?|([^\s"]+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const phrase = m[1] !== undefined;
    const folded = foldSearchText(phrase ? m[1] : m[2]);
    if (folded === '') continue;
    if (folded.split(' ').some((w) => Buffer.byteLength(w) > MAX_LEXEME_BYTES)) return null;
    phrases.push(folded);
    prefix = !phrase;
  }
  return phrases.length === 0 ? null : { phrases, prefix };
}

/**
 * A search as fts.ts's FTS5 expression has it (what IMAP's SEARCH parser makes, `body : (...)`
 * for SEARCH BODY) read back into terms: the expression is ftsMatch's, so every term is a quoted
 * string, with a `*` after the last one when it is a prefix.
 */
export function pgSearchOfFtsMatch(match: string): { search: PgSearch | null; bodyOnly: boolean } {
  const inner = /^body : \((.*)\)$/s.exec(match);
  const phrases: string[] = [];
  let prefix = false;
  for (const m of (inner ? inner[1] : match).matchAll(/"((?:[^"]|"")*)"(\*?)/g)) {
    const folded = foldSearchText(m[1].replace(/""/g, '"'));
    if (folded === '') continue;
    if (folded.split(' ').some((w) => Buffer.byteLength(w) > MAX_LEXEME_BYTES)) return { search: null, bodyOnly: inner !== null };
    phrases.push(folded);
    prefix = m[2] === '*';
  }
  return { search: phrases.length === 0 ? null : { phrases, prefix }, bodyOnly: inner !== null };
}

/** The encoded form of a search carried in a ListQuery's `match` (a string, as the reader threads pass it). */
export const encodePgSearch = (s: PgSearch): string => JSON.stringify(s);
export const decodePgSearch = (match: string): PgSearch => JSON.parse(match) as PgSearch;

/** One AND-ed term of a search's tsquery: a phrase, a prefix word (`word:*`), or a phrase followed (<->) by one. */
export type TsqueryTerm = { phrase: string; prefix?: undefined } | { phrase?: string; prefix: string };

/**
 * The terms of a search's tsquery: each phrase through phraseto_tsquery, and the last word of the
 * last bare term through to_tsquery with `:*` (its words are letters and digits only after
 * folding, so no tsquery syntax is in it). Both renderings (`tsquery`, sql.ts `tsqueryOf`) bind
 * the user's words only as parameters.
 */
export function tsqueryTerms(s: PgSearch): TsqueryTerm[] {
  return s.phrases.map((p, i) => {
    if (!(s.prefix && i === s.phrases.length - 1)) return { phrase: p };
    const words = p.split(' ');
    const prefix = `${words[words.length - 1]}:*`;
    return words.length === 1 ? { prefix } : { phrase: words.slice(0, -1).join(' '), prefix };
  });
}

/** The tsquery of a search as a Kysely fragment (tsqueryTerms). */
export function tsquery(s: PgSearch): RawBuilder<unknown> {
  const parts = tsqueryTerms(s).map((t) => {
    if (t.prefix === undefined) return sql`phraseto_tsquery('simple', ${t.phrase})`;
    const last = sql`to_tsquery('simple', ${t.prefix})`;
    return t.phrase === undefined ? last : sql`(phraseto_tsquery('simple', ${t.phrase}) <-> ${last})`;
  });
  return sql`(${sql.join(parts, sql` && `)})`;
}
