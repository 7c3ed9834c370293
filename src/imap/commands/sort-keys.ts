import addressparser from 'nodemailer/lib/addressparser';
import { decodeWords } from './search.js';

/*
 * The values SORT (RFC 5256) and THREAD compare, from a message's header fields: the base subject,
 * the first address's mailbox of an address field, the display name (SORT=DISPLAY, RFC 5957), and
 * the sent date.
 */

/**
 * The base subject (RFC 5256 2.1): encoded words decoded, whitespace runs as one space, then
 * trailing "(fwd)", leading "Re:", "Fw:", "Fwd:" (with [blob]s), leading [blob]s and a
 * "[Fwd: ...]" wrapper removed until none is left; compared in upper case (as i;unicode-casemap titlecases).
 */
export function baseSubject(subject: string): string {
  let s = decodeWords(subject).replace(/\s+/g, ' ').trim();
  for (;;) {
    const before = s;
    s = s.replace(/(\s*\(fwd\))+\s*$/i, '').trim();
    for (;;) {
      const inner = s;
      s = s.replace(/^(\[[^[\]]*\]\s*)*(re|fwd?)\s*(\[[^[\]]*\])?\s*:\s*/i, '');
      const blob = /^\[[^[\]]*\]\s*/.exec(s);
      if (blob && s.length > blob[0].length) s = s.slice(blob[0].length);
      if (s === inner) break;
    }
    const wrapped = /^\[fwd:\s*(.*)\]$/i.exec(s);
    if (wrapped) s = wrapped[1].trim();
    if (s === before) break;
  }
  return s.toUpperCase();
}

type Address = { name?: string; address?: string; group?: Address[] };

function firstAddress(value: string | undefined): Address | null {
  if (!value) return null;
  try {
    // A group counts by its name (its ENVELOPE start entry has the name as mailbox, RFC 5256 2.2).
    const first = (addressparser(value) as Address[]).find((a) => a.group || a.address || a.name);
    return first?.group ? { name: first.name, address: first.name } : first ?? null;
  } catch {
    return null;
  }
}

/** The local part of the first address (SORT FROM, TO, CC), upper case; '' without one. */
export function addressKey(value: string | undefined): string {
  const a = firstAddress(value)?.address ?? '';
  const at = a.lastIndexOf('@');
  return (at >= 0 ? a.slice(0, at) : a).toUpperCase();
}

/** The display name of the first address, or its address when it has none (SORT DISPLAYFROM, DISPLAYTO). */
export function displayKey(value: string | undefined): string {
  const a = firstAddress(value);
  return (a ? decodeWords(a.name || '') || a.address || '' : '').toUpperCase();
}

/** The instant a Date header names (ms), or null when it names none. */
export function sentAt(value: string | undefined): number | null {
  if (!value) return null;
  const t = Date.parse(value.replace(/\s*\([^)]*\)\s*$/, ''));
  return Number.isNaN(t) ? null : t;
}
