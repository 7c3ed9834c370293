import { unprocessable } from '../errors.js';

/** A position in the (received_at, id) order: after it going down (`next`), or before it going up (`prev`). */
export interface ListCursor {
  direction: 'next' | 'prev';
  receivedAt: number;
  id: number;
}

/** A position in the update-marker order of sync: items with a larger marker come next. */
export interface SyncCursor {
  marker: number;
}

const LIST = /^([np])\.(-?\d{1,16})\.(\d{1,16})$/;
const SYNC = /^s\.(-?\d{1,19})$/;

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
function decode(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw unprocessable('cursor is invalid');
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

/** The opaque text of a list cursor. */
export const encodeListCursor = (c: ListCursor) => encode(`${c.direction === 'next' ? 'n' : 'p'}.${c.receivedAt}.${c.id}`);

/** Reads a list cursor; 422 for anything that is not one. */
export function decodeListCursor(cursor: string): ListCursor {
  const m = LIST.exec(decode(cursor));
  const receivedAt = m ? Number(m[2]) : NaN;
  const id = m ? Number(m[3]) : NaN;
  if (!m || !Number.isSafeInteger(receivedAt) || !Number.isSafeInteger(id)) throw unprocessable('cursor is invalid');
  return { direction: m[1] === 'n' ? 'next' : 'prev', receivedAt, id };
}

/** The opaque text of a sync cursor. */
export const encodeSyncCursor = (c: SyncCursor) => encode(`s.${c.marker}`);

/** Reads a sync cursor; 422 for anything that is not one. */
export function decodeSyncCursor(cursor: string): SyncCursor {
  const m = SYNC.exec(decode(cursor));
  const marker = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(marker)) throw unprocessable('cursor is invalid');
  return { marker };
}
