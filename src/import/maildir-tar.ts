import type { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { ApiError } from '../errors.js';
import { MAX_MBOX_MESSAGE } from './mbox.js';

/** One message of a Maildir tree in a tar. */
export interface MaildirMessage {
  /** Our folder name: INBOX for the tree's root, `A/B` for Maildir++'s `.A.B`. */
  folder: string;
  raw: Buffer;
  flags: string[];
  /** The file's modification time (Dovecot's received date), else the time its name starts with, in ms. */
  receivedAt: number;
}

/** Maildir's info letters (`:2,` suffix) and the IMAP flags they stand for. */
export const MAILDIR_FLAGS: Record<string, string> = { D: '\\Draft', F: '\\Flagged', R: '\\Answered', S: '\\Seen', T: '\\Deleted' };

/** The folder a Maildir++ directory name stands for (`.A.B` is `A/B`; the root is INBOX). */
export function folderOfDir(dir: string | undefined): string {
  if (!dir || !dir.startsWith('.') || dir === '.' || dir === '..') return 'INBOX';
  const name = dir.slice(1).split('.').join('/');
  return name.toUpperCase() === 'INBOX' ? 'INBOX' : name;
}

/** The flags of a Maildir file name; lowercase letters are keywords from the folder's dovecot-keywords. */
export function flagsOfName(file: string, keywords: ReadonlyMap<string, string> | undefined): string[] {
  const info = /:2,([A-Za-z]*)$/.exec(file)?.[1] ?? '';
  const flags: string[] = [];
  for (const c of info) {
    const f = MAILDIR_FLAGS[c] ?? (c >= 'a' && c <= 'z' ? keywords?.get(c) : undefined);
    if (f && !flags.includes(f)) flags.push(f);
  }
  return flags;
}

async function readAll(entry: AsyncIterable<Buffer>, size: number): Promise<Buffer> {
  if (size > MAX_MBOX_MESSAGE) throw new ApiError(422, `A file of the tar is larger than ${MAX_MBOX_MESSAGE} bytes`);
  const parts: Buffer[] = [];
  for await (const c of entry) parts.push(c);
  return Buffer.concat(parts);
}

/**
 * Reads a tar of a Maildir or Maildir++ tree as a stream: every regular file directly inside a
 * `cur` or `new` directory is a message of the folder that directory belongs to, whatever
 * leading directories the tar has (`Maildir/`, `./`); other files are passed over, except
 * Dovecot's `dovecot-keywords`, which names the keyword letters of the files after it.
 */
export async function* readMaildirTar(input: Readable): AsyncGenerator<MaildirMessage> {
  const ex = extract();
  input.on('error', (err) => ex.destroy(err));
  input.pipe(ex);
  const keywords = new Map<string, Map<string, string>>();
  for await (const entry of ex) {
    const h = entry.header;
    const parts = h.name.split('/').filter((p) => p !== '' && p !== '.');
    const file = parts[parts.length - 1] ?? '';
    const parent = parts[parts.length - 2];
    if (h.type === 'file' && file === 'dovecot-keywords') {
      const text = (await readAll(entry, h.size ?? 0)).toString('utf8');
      const map = new Map<string, string>();
      for (const line of text.split('\n')) {
        const m = /^(\d+) (\S+)$/.exec(line.trim());
        if (m && Number(m[1]) < 26) map.set(String.fromCharCode(0x61 + Number(m[1])), m[2]!);
      }
      keywords.set(folderOfDir(parent), map);
      continue;
    }
    if (h.type !== 'file' || (parent !== 'cur' && parent !== 'new') || file.startsWith('.')) {
      for await (const _ of entry) { /* passed over */ }
      continue;
    }
    const folder = folderOfDir(parts[parts.length - 3]);
    const raw = await readAll(entry, h.size ?? 0);
    const mtime = h.mtime instanceof Date ? h.mtime.getTime() : NaN;
    const named = /^(\d{9,11})\./.exec(file);
    const receivedAt = Number.isFinite(mtime) && mtime > 0 ? mtime : named ? Number(named[1]) * 1000 : 0;
    yield { folder, raw, flags: parent === 'cur' ? flagsOfName(file, keywords.get(folder)) : [], receivedAt };
  }
}
