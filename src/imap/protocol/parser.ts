/*
 * The IMAP command grammar (RFC 9051 section 9) over one whole command: its line with every literal's
 * bytes inline, as the command reader (reader.ts) assembles it. Commands read their arguments
 * with the methods here, in order, so each command's grammar reads like the RFC's; anything that
 * does not fit throws ParseError, which the session answers with BAD.
 */

/** A command that does not follow the grammar (answered with BAD). */
export class ParseError extends Error {}

const SP = 0x20;
const CR = 0x0d;
const LF = 0x0a;

/** Characters an atom may not hold: ( ) { SP CTL % * " \ ] (RFC 9051 atom-specials). */
function atomChar(c: number): boolean {
  return c > 0x20 && c < 0x7f && c !== 0x28 && c !== 0x29 && c !== 0x7b && c !== 0x25 && c !== 0x2a && c !== 0x22 && c !== 0x5c && c !== 0x5d;
}
/** ASTRING-CHAR: ATOM-CHAR or resp-specials (]). */
const astringChar = (c: number) => atomChar(c) || c === 0x5d;
/** Characters of a LIST pattern: ASTRING-CHAR plus the wildcards. */
const listChar = (c: number) => astringChar(c) || c === 0x25 || c === 0x2a;

/** One range of a sequence set; `Infinity` stands for `*`. */
export interface SeqRange { from: number; to: number }
/** A sequence set (`1:4,7,9:*`), or `$` (the last search result, RFC 5182). */
export type SeqSet = SeqRange[];

export class Parser {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  get done(): boolean { return this.pos >= this.buf.length; }
  peek(): number { return this.buf[this.pos]; }

  fail(what: string): never {
    throw new ParseError(`${what} expected at ${this.pos}`);
  }

  /** Exactly one space. */
  sp(): void {
    if (this.buf[this.pos] !== SP) this.fail('space');
    this.pos++;
  }

  /** A space if one is next. */
  maybeSp(): boolean {
    if (this.buf[this.pos] !== SP) return false;
    this.pos++;
    return true;
  }

  /** The end of the command. */
  end(): void {
    if (!this.done) this.fail('end of command');
  }

  /** Consumes `s` (case-insensitive) if it is next. */
  take(s: string): boolean {
    const end = this.pos + s.length;
    if (end > this.buf.length || this.buf.toString('latin1', this.pos, end).toUpperCase() !== s.toUpperCase()) return false;
    this.pos = end;
    return true;
  }

  expect(s: string): void {
    if (!this.take(s)) this.fail(JSON.stringify(s));
  }

  private run(ok: (c: number) => boolean): string {
    const start = this.pos;
    while (this.pos < this.buf.length && ok(this.buf[this.pos])) this.pos++;
    return this.buf.toString('utf8', start, this.pos);
  }

  atom(): string {
    const a = this.run(atomChar);
    if (a === '') this.fail('atom');
    return a;
  }

  /** A fetch attribute or search key name: letters, digits, dots and hyphens. */
  word(): string {
    const w = this.run((c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d);
    if (w === '') this.fail('name');
    return w.toUpperCase();
  }

  /** A command tag: ASTRING-CHAR but "+". */
  tag(): string {
    const t = this.run((c) => astringChar(c) && c !== 0x2b);
    if (t === '') this.fail('tag');
    return t;
  }

  /** A non-negative number (32 bits unless `max` says more). */
  number(max = 0xffffffff): number {
    const s = this.run((c) => c >= 0x30 && c <= 0x39);
    if (s === '' || s.length > 20) this.fail('number');
    const n = Number(s);
    if (n > max) this.fail('smaller number');
    return n;
  }

  /** A non-zero number. */
  nzNumber(): number {
    const n = this.number();
    if (n === 0) this.fail('non-zero number');
    return n;
  }

  /** A mod-sequence value (63 bits; JS numbers are exact to 2^53, enough for update markers). */
  modseq(): number {
    return this.number(Number.MAX_SAFE_INTEGER);
  }

  /**
   * A quoted string or a literal, as bytes. NUL is in neither (RFC 9051: QUOTED-CHAR and CHAR8
   * exclude it), and PostgreSQL refuses it in text, so a name or string holding one is BAD here.
   */
  string(): Buffer {
    const c = this.peek();
    let out: Buffer | null = null;
    if (c === 0x22) out = this.quoted();
    else if (c === 0x7b || (c === 0x7e && this.buf[this.pos + 1] === 0x7b)) out = this.literal();
    if (!out) this.fail('string');
    if (out.includes(0)) this.fail('string without NUL');
    return out;
  }

  private quoted(): Buffer {
    this.pos++;
    const out: number[] = [];
    for (;;) {
      if (this.pos >= this.buf.length) this.fail('closing quote');
      const c = this.buf[this.pos++];
      if (c === 0x22) return Buffer.from(out);
      if (c === CR || c === LF) this.fail('quoted character');
      if (c === 0x5c) {
        const e = this.buf[this.pos++];
        if (e !== 0x22 && e !== 0x5c) this.fail('quoted-special');
        out.push(e);
      } else out.push(c);
    }
  }

  /** `{n}` / `{n+}` / `~{n}` then CRLF and n bytes (the reader put them inline). */
  literal(): Buffer {
    this.take('~');
    this.expect('{');
    const n = this.number();
    this.take('+');
    this.expect('}');
    if (this.buf[this.pos] !== CR || this.buf[this.pos + 1] !== LF) this.fail('CRLF after literal size');
    this.pos += 2;
    if (this.pos + n > this.buf.length) this.fail('literal bytes');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  isString(): boolean {
    const c = this.peek();
    return c === 0x22 || c === 0x7b || (c === 0x7e && this.buf[this.pos + 1] === 0x7b);
  }

  /** An astring as text (UTF-8). */
  astring(): string {
    if (this.isString()) return this.string().toString('utf8');
    const a = this.run(astringChar);
    if (a === '') this.fail('astring');
    return a;
  }

  /** A LIST mailbox pattern (may hold % and *). */
  listMailbox(): string {
    if (this.isString()) return this.string().toString('utf8');
    const a = this.run(listChar);
    if (a === '') this.fail('list-mailbox');
    return a;
  }

  /** A mailbox name; `inbox` in any case is INBOX. */
  mailbox(): string {
    const name = this.astring();
    return name.toUpperCase() === 'INBOX' ? 'INBOX' : name;
  }

  /** `(` item *(SP item) `)`; `empty` allows `()`. */
  list<T>(item: () => T, empty = true): T[] {
    this.expect('(');
    const out: T[] = [];
    if (this.take(')')) {
      if (!empty) this.fail('list item');
      return out;
    }
    for (;;) {
      out.push(item());
      if (this.take(')')) return out;
      this.sp();
    }
  }

  /** A flag: `\Word` or a keyword atom. */
  flag(): string {
    if (this.take('\\')) return '\\' + this.atom();
    return this.atom();
  }

  /** A sequence set (`$` included). */
  seqSet(): SeqSet | '$' {
    if (this.take('$')) return '$';
    const out: SeqSet = [];
    for (;;) {
      const a = this.seqNumber();
      let b = a;
      if (this.take(':')) b = this.seqNumber();
      out.push({ from: Math.min(a, b), to: Math.max(a, b) });
      if (!this.take(',')) return out;
    }
  }

  private seqNumber(): number {
    if (this.take('*')) return Infinity;
    return this.nzNumber();
  }

  /** A date `d-Mon-yyyy` (bare or quoted) as UTC midnight in ms. */
  date(): number {
    const quoted = this.take('"');
    const s = this.run((c) => c === 0x2d || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a));
    if (quoted) this.expect('"');
    const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(s);
    const month = m ? MONTHS.indexOf(m[2][0].toUpperCase() + m[2].slice(1).toLowerCase()) : -1;
    if (!m || month < 0) this.fail('date');
    return Date.UTC(Number(m[3]), month, Number(m[1]));
  }

  /** A date-time `"dd-Mon-yyyy hh:mm:ss +zzzz"` in ms. */
  dateTime(): number {
    const s = this.string().toString('latin1');
    const m = /^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)$/.exec(s);
    const month = m ? MONTHS.indexOf(m[2][0].toUpperCase() + m[2].slice(1).toLowerCase()) : -1;
    if (!m || month < 0) this.fail('date-time');
    const zone = (Number(m[8]) * 60 + Number(m[9])) * (m[7] === '-' ? -1 : 1);
    return Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - zone * 60_000;
  }

  /** The rest of the command as text (AUTHENTICATE responses, ID values are parsed elsewhere). */
  rest(): string {
    const s = this.buf.toString('utf8', this.pos);
    this.pos = this.buf.length;
    return s;
  }
}

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Whether `n` lies in the set, `*` being `max`. */
export function inSet(set: SeqSet, n: number, max: number): boolean {
  for (const r of set) {
    const from = r.from === Infinity ? max : r.from;
    const to = r.to === Infinity ? max : r.to;
    if (n >= Math.min(from, to) && n <= Math.max(from, to)) return true;
  }
  return false;
}

/** A set of numbers as compact IMAP text (`1:3,7`). */
export function formatSet(nums: number[]): string {
  const sorted = [...new Set(nums)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}:${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
