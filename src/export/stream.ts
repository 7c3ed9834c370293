import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import type { EmailFiles } from '../emails/files.js';
import { mboxEntry } from './mbox.js';
import { tarEnd, tarEntry } from './tar.js';

/** Messages read from the database per page; one message's bytes are held at a time. */
const PAGE = 200;

type Row = { id: number; uid: number; flags: string; read: number | boolean; received_at: number };

/** The live messages of a folder in UID order, a page at a time. */
async function* folderRows(db: Db, mailboxId: number, folder: string): AsyncGenerator<Row> {
  let after = 0;
  for (;;) {
    const page = (await sql<Row>`SELECT id, uid, flags, read_at IS NOT NULL AS read, received_at FROM emails
      WHERE mailbox_id = ${mailboxId} AND folder = ${folder} AND deleted_at IS NULL AND uid > ${after} ORDER BY uid LIMIT ${PAGE}`.execute(db)).rows;
    for (const r of page) yield r;
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.uid;
  }
}

/** Maildir info letters of a message's flags, in the alphabetical order Maildir wants. */
function infoLetters(r: Row, keywordLetter: ReadonlyMap<string, string>): string {
  const flags = r.flags ? r.flags.split(' ') : [];
  const letters = new Set<string>();
  if (r.read === 1 || r.read === true) letters.add('S');
  for (const f of flags) {
    const l = ({ '\\Draft': 'D', '\\Flagged': 'F', '\\Answered': 'R', '\\Deleted': 'T' } as Record<string, string>)[f] ?? keywordLetter.get(f);
    if (l) letters.add(l);
  }
  return [...letters].sort().join('');
}

/** The Maildir++ directory of a folder: the root for INBOX, `.A.B` for `A/B`. */
export const dirOfFolder = (folder: string) => (folder === 'INBOX' ? '' : `.${folder.split('/').join('.')}/`);

/**
 * Exports of a mailbox, streamed with bounded memory: pages of rows, one message's bytes at a
 * time, and the stream pulls the next only when the client has taken the last (backpressure).
 */
export function createExports({ db, files, hostname }: { db: Db; files: EmailFiles; hostname: string }) {
  return {
    /** One folder as mboxrd. */
    mbox(tenantId: number, mailboxId: number, folder: string): Readable {
      return Readable.from((async function* () {
        for await (const r of folderRows(db, mailboxId, folder)) yield mboxEntry(await files.rawBytes(tenantId, r.id), Number(r.received_at));
      })(), { objectMode: false });
    },

    /** Every folder as a Maildir++ tree in a tar: flags in the file names, keywords in each folder's dovecot-keywords. */
    maildir(tenantId: number, mailboxId: number, folders: string[]): Readable {
      return Readable.from((async function* () {
        const now = Date.now();
        for (const folder of folders) {
          const dir = dirOfFolder(folder);
          for (const sub of ['cur/', 'new/', 'tmp/']) yield* dirEntry(dir + sub, now);
          // Keywords of the folder get the letters a-z (Dovecot's dovecot-keywords); more are left out.
          const kw = (await sql<{ flags: string }>`SELECT DISTINCT flags FROM emails WHERE mailbox_id = ${mailboxId} AND folder = ${folder}
            AND deleted_at IS NULL AND flags <> ''`.execute(db)).rows.flatMap((r) => r.flags.split(' ')).filter((f) => !f.startsWith('\\'));
          const keywords = [...new Set(kw)].sort().slice(0, 26);
          const letter = new Map(keywords.map((k, i) => [k, String.fromCharCode(0x61 + i)]));
          if (keywords.length > 0) {
            yield* tarEntry({ name: `${dir}dovecot-keywords`, data: Buffer.from(keywords.map((k, i) => `${i} ${k}\n`).join('')), mtime: now });
          }
          for await (const r of folderRows(db, mailboxId, folder)) {
            const at = Number(r.received_at);
            const data = await files.rawBytes(tenantId, r.id);
            yield* tarEntry({ name: `${dir}cur/${Math.floor(at / 1000)}.M${r.id}.${hostname},S=${data.length}:2,${infoLetters(r, letter)}`, data, mtime: at });
          }
        }
        yield tarEnd();
      })(), { objectMode: false });
    },
  };
}
export type Exports = ReturnType<typeof createExports>;

/** A directory entry of the tar (Maildir readers expect cur, new and tmp to exist). */
function dirEntry(name: string, mtime: number): Buffer[] {
  const [h] = tarEntry({ name, data: Buffer.alloc(0), mtime });
  // The same header as a file's, with type 5 (directory) and its checksum made again.
  const header = Buffer.from(h!);
  header.write('5', 156, 'ascii');
  header.write('0000755\0', 100, 'ascii');
  header.write(' '.repeat(8), 148, 'ascii');
  let sum = 0;
  for (const b of header) sum += b;
  header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return [header];
}
