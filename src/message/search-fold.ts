/*
 * PostgreSQL's search (DECISIONS.md section 17) folds the indexed text (mailstore/postgres/email-writes.ts)
 * and the query (emails/postgres/search.ts) the same way, so they split and fold as SQLite FTS5's
 * unicode61 tokenizer does whatever the cluster's locale.
 */

/** Text as the index and queries see it: lowercase, no combining marks, only letters and digits between spaces. */
export function foldSearchText(text: string): string {
  return text.normalize('NFD').replace(/\p{Mn}+/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
