import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'spam');

/** A corpus message of test/fixtures/spam, with the Message-ID it carries. */
export interface CorpusMessage { name: string; raw: string; messageId: string }

/** Messages `ham-01`..`ham-16` or `spam-01`..`spam-16` from `first` to `last` (1-based, inclusive). */
export function corpus(kind: 'ham' | 'spam', first: number, last: number): CorpusMessage[] {
  const out: CorpusMessage[] = [];
  for (let i = first; i <= last; i++) {
    const name = `${kind}-${String(i).padStart(2, '0')}`;
    let raw = readFileSync(join(DIR, `${name}.eml`), 'latin1');
    // Each gets a Message-ID of its own so deliveries in one test never collide as duplicates.
    raw = raw.replace(/^Message-Id:[^\r\n]*(\r\n[ \t][^\r\n]*)*\r\n/im, '');
    const messageId = `<${name}@corpus.test>`;
    out.push({ name, raw: `Message-ID: ${messageId}\r\n${raw}`, messageId });
  }
  return out;
}
