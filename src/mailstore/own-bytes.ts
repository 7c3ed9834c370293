import type { Db } from '../db/connection.js';
import type { StoredMessage } from '../inbound/message.js';
import type { FiledCopy } from '../inbound/types.js';
import { storageSql } from './storage-sql.js';

/**
 * Bytes a stored copy keeps of its own (email_raw) instead of sharing its queued message's: the
 * queued raw bytes after `skip` (a Sent copy leaves out the delivered form's front), with `prefix`
 * in front (header lines a delivery step put there, e.g. X-Spam-Status).
 */
export interface OwnBytes {
  prefix: string;
  skip: number;
}

/**
 * Writes a copy's own bytes: copied inside the database from its queued message's row, or, for a
 * message kept in a raw file, from that file (`readRawFile`).
 */
export async function writeOwnBytes(
  trx: Db, emailId: number, inbound: { id: number; rawPath: string | null }, own: OwnBytes, readRawFile?: (name: string) => Promise<Buffer>,
): Promise<void> {
  const prefix = Buffer.from(own.prefix, 'utf8');
  if (inbound.rawPath) {
    if (!readRawFile) throw new Error(`raw file of inbound row ${inbound.id} cannot be read here`);
    const raw = await readRawFile(inbound.rawPath);
    await trx.insertInto('email_raw').values({ email_id: emailId, raw: Buffer.concat([prefix, raw.subarray(own.skip)]) }).execute();
    return;
  }
  await storageSql(trx).copyInboundBytes(trx, emailId, inbound.id, own.skip, prefix);
}

/** The message as its filed copy keeps it: without the header fields of the delivered form's front, and IMAP's size of the shorter bytes. */
export function asWritten(m: StoredMessage, omit: NonNullable<FiledCopy['omit']>): StoredMessage {
  const headers: Record<string, string | string[]> = { ...m.headers };
  // Those fields came first, so each is its name's first value.
  for (const name of omit.headers) {
    const v = headers[name];
    if (Array.isArray(v)) {
      const rest = v.slice(1);
      if (rest.length > 1) headers[name] = rest;
      else if (rest.length === 1) headers[name] = rest[0];
      else delete headers[name];
    } else {
      delete headers[name];
    }
  }
  return { ...m, headers, ...(m.imap ? { imap: { ...m.imap, size: m.imap.size - omit.bytes } } : {}) };
}

/**
 * The message with header lines put in front of it: each field first among the stored values of
 * its name (lower-cased, as the parser keeps names), and IMAP's size of the longer bytes.
 */
export function withPrepended(m: StoredMessage, prepend: string): StoredMessage {
  const fields = prepend.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/).filter((l) => l.includes(':'));
  const front: Record<string, string | string[]> = {};
  for (const line of fields) {
    const name = line.slice(0, line.indexOf(':')).trim().toLowerCase();
    const value = line.slice(line.indexOf(':') + 1).trim();
    const had = front[name];
    front[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  const headers: Record<string, string | string[]> = { ...front };
  for (const [name, v] of Object.entries(m.headers)) {
    const had = headers[name];
    if (had === undefined) { headers[name] = v; continue; }
    headers[name] = [...(Array.isArray(had) ? had : [had]), ...(Array.isArray(v) ? v : [v])];
  }
  const bytes = Buffer.byteLength(prepend);
  return { ...m, headers, ...(m.imap ? { imap: { ...m.imap, size: m.imap.size + bytes } } : {}) };
}
