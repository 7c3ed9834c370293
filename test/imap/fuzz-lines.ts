/**
 * A seeded generator of hostile IMAP command lines for fuzz.test.ts: random tags, atoms, quoted
 * strings with escapes, literals whose announced size is wrong, {n+}, unbalanced parentheses, odd
 * sequence sets, huge numbers, NUL and 8-bit bytes, and now and then an overlong line.
 */

/** mulberry32: small, fast and reproducible from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMANDS = ['CAPABILITY', 'NOOP', 'LOGOUT', 'LOGIN', 'AUTHENTICATE', 'SELECT', 'EXAMINE', 'CREATE', 'DELETE', 'RENAME',
  'SUBSCRIBE', 'UNSUBSCRIBE', 'LIST', 'LSUB', 'NAMESPACE', 'STATUS', 'APPEND', 'IDLE', 'CHECK', 'CLOSE', 'UNSELECT', 'EXPUNGE',
  'SEARCH', 'FETCH', 'STORE', 'COPY', 'MOVE', 'UID', 'ENABLE', 'ID', 'GETQUOTA', 'GETQUOTAROOT', 'STARTTLS', 'XYZZY', ''];
const SEQUENCES = ['1:*', '*:5', '0', '4294967296', '4294967295', '99999999999999999999999', '1,2,3:4', '*', '1:4294967295', '-1',
  '1::2', ',', '1,', '2:1', '0:0', '1:*,*:5,0', '00001', '1.5'];
const ITEMS = ['FLAGS', 'BODY[]', 'BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]', 'BODY[1.2.3.4.5.6.7.8.9]', 'BODY[]<0.4294967296>',
  'BODY[TEXT]<99999999999999.1>', 'RFC822', 'ENVELOPE', 'BODYSTRUCTURE', 'UID', 'MODSEQ', 'BINARY[1]', 'ALL', 'FAST', 'FULL',
  '\\Seen', '\\Deleted', '\\Bogus', '$Label', '(CHANGEDSINCE 0)', 'CHARSET', 'UTF-8', 'X-UNKNOWN', 'NOT', 'OR', 'HEADER', 'INBOX', '"INBOX"', '%', '*'];

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, n: number) => Math.floor(r() * n);

function randomBytes(r: Rand, n: number, eightBit: boolean): Buffer {
  const b = Buffer.alloc(n);
  // No CR or LF: line ends are placed on purpose, so every unit is one line plus its literals.
  for (let i = 0; i < n; i++) { let c = eightBit ? int(r, 256) : 32 + int(r, 95); if (c === 10 || c === 13) c = 0; b[i] = c; }
  return b;
}

function quoted(r: Rand): string {
  const parts = ['"', 'a\\"b', '\\\\', '\\x', 'plain', 'ü', ' ', '(', ')', '{3}'];
  let s = '"';
  for (let i = int(r, 5); i > 0; i--) s += pick(r, parts);
  return r() < 0.15 ? s : s + '"';
}

/** One argument: an atom, quoted string, literal, parenthesised list, sequence set or item. */
function argument(r: Rand, depth: number): Buffer {
  const k = r();
  if (k < 0.2) return Buffer.from(pick(r, SEQUENCES));
  if (k < 0.4) return Buffer.from(pick(r, ITEMS));
  if (k < 0.5) return Buffer.from(quoted(r), 'utf8');
  if (k < 0.6) {
    // A literal: its announced size is right, short or long, or absurd; sometimes non-synchronising.
    const size = int(r, 40);
    const announced = pick(r, [size, size, size + 1 + int(r, 8), Math.max(0, size - 1 - int(r, 8)), 4294967296, 99999999]);
    const plus = r() < 0.3 ? '+' : '';
    return Buffer.concat([Buffer.from(`{${announced}${plus}}\r\n`), randomBytes(r, size, r() < 0.3)]);
  }
  if (k < 0.7 && depth < 4) {
    const inner: Buffer[] = [];
    for (let i = int(r, 4); i > 0; i--) inner.push(argument(r, depth + 1));
    const open = r() < 0.9 ? '(' : '';
    const close = r() < 0.85 ? ')' : r() < 0.5 ? '))' : '';
    return Buffer.concat([Buffer.from(open), ...inner.flatMap((b, i) => (i ? [Buffer.from(' '), b] : [b])), Buffer.from(close)]);
  }
  if (k < 0.75) return randomBytes(r, 1 + int(r, 12), true);
  if (k < 0.8) return Buffer.from(String(Math.floor(r() * 1e25)));
  return Buffer.from(pick(r, ['NIL', 'ALL', 'UID', '[', ']', '<', '>', '\\', '~{5}', 'DONE', 'BODY[', 'A'.repeat(1 + int(r, 300))]));
}

export interface HostileLine {
  bytes: Buffer;
  /** The tag when it is a well-formed one the server must answer by name; null for a garbage tag. */
  tag: string | null;
}

/** The n-th hostile line of the generator `r`. */
export function hostileLine(r: Rand, n: number): HostileLine {
  if (r() < 0.004) return { bytes: Buffer.from(`f${n} NOOP ${'A'.repeat(70 * 1024)}\r\n`), tag: null };
  const goodTag = r() < 0.8;
  const tag = goodTag ? `f${n}` : pick(r, ['', '*', '+', 'a(b', 'a{1}', '"q"', 'x%', '\x00', '\xff\xfe', 'ta\\g', `f${n}]`]);
  const parts: Buffer[] = [Buffer.from(tag, 'latin1'), Buffer.from(' '), Buffer.from(pick(r, COMMANDS))];
  if (r() < 0.15) parts.push(Buffer.from(' '), Buffer.from(pick(r, ['FETCH', 'STORE', 'SEARCH', 'COPY', 'MOVE', 'EXPUNGE', 'BOGUS'])));
  for (let i = int(r, 6); i > 0; i--) parts.push(Buffer.from(r() < 0.9 ? ' ' : '  '), argument(r, 0));
  parts.push(Buffer.from('\r\n'));
  return { bytes: Buffer.concat(parts), tag: goodTag ? tag : null };
}
