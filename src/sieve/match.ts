// Comparators (RFC 4790: i;octet, i;ascii-casemap, i;ascii-numeric) and match types (RFC 5228 2.7.1:
// :is, :contains, :matches; RFC 5231: :value, :count). Work is bounded: a glob is matched in O(n*m)
// without backtracking, and captures are only taken once a match is known.

export type Relation = 'gt' | 'ge' | 'lt' | 'le' | 'eq' | 'ne';
export interface Matcher {
  comparator: string;
  type: 'is' | 'contains' | 'matches' | 'value' | 'count';
  relation: Relation;
}

const HAS_UPPER = /[A-Z]/;
const asciiLower = (s: string): string => (HAS_UPPER.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s);
/** Lone or paired surrogates: strings holding none compare equal as UTF-8 octets exactly when they are the same string. */
const SURROGATE = /[\ud800-\udfff]/;

/** :is under i;octet or i;ascii-casemap: equality of the octets, without encoding either side for the common case. */
function sameOctets(comparator: string, a: string, b: string): boolean {
  const x = fold(comparator, a);
  const y = fold(comparator, b);
  if (x === y) return true;
  // Without surrogates UTF-8 encoding is one-to-one; with them (a lone one encodes as U+FFFD) the octets decide.
  if (!SURROGATE.test(x) && !SURROGATE.test(y)) return false;
  return Buffer.compare(Buffer.from(x), Buffer.from(y)) === 0;
}

function fold(comparator: string, s: string): string {
  return comparator === 'i;ascii-casemap' ? asciiLower(s) : s;
}

/** i;ascii-numeric: the leading digits' value, or Infinity when there are none (RFC 4790 9.1.1). */
function numeric(s: string): bigint | null {
  const m = /^[0-9]+/.exec(s);
  return m ? BigInt(m[0]) : null;
}

/** -1, 0, 1 ordering under a comparator. */
export function compare(comparator: string, a: string, b: string): number {
  if (comparator === 'i;ascii-numeric') {
    const x = numeric(a);
    const y = numeric(b);
    if (x === null) return y === null ? 0 : 1;
    if (y === null) return -1;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = Buffer.from(fold(comparator, a));
  const y = Buffer.from(fold(comparator, b));
  return Math.sign(Buffer.compare(x, y));
}

export function relate(relation: Relation, order: number): boolean {
  switch (relation) {
    case 'gt': return order > 0;
    case 'ge': return order >= 0;
    case 'lt': return order < 0;
    case 'le': return order <= 0;
    case 'eq': return order === 0;
    case 'ne': return order !== 0;
  }
}

interface GlobToken { kind: 'lit' | 'star' | 'one'; text: string }

function globTokens(pattern: string): GlobToken[] {
  const out: GlobToken[] = [];
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\' && i + 1 < chars.length) out.push({ kind: 'lit', text: chars[++i] });
    else if (c === '*') out.push({ kind: 'star', text: '' });
    else if (c === '?') out.push({ kind: 'one', text: '' });
    else out.push({ kind: 'lit', text: c });
  }
  return out;
}

/**
 * :matches with captures for match variables (RFC 5229 3.2): each wildcard takes as little as it can,
 * left to right. Returns null when there is no match. Values are compared per character (code point).
 */
export function globMatch(comparator: string, value: string, pattern: string, wantCaptures: boolean): string[] | null {
  const v = Array.from(value);
  const vf = Array.from(fold(comparator, value));
  const toks = globTokens(fold(comparator, pattern));
  const n = v.length;
  const m = toks.length;
  // ok[i][j]: toks[j..] matches vf[i..]; computed from the end, O(n*m).
  const width = n + 1;
  const ok = new Uint8Array((m + 1) * width);
  ok[m * width + n] = 1;
  for (let j = m - 1; j >= 0; j--) {
    const t = toks[j];
    for (let i = n; i >= 0; i--) {
      let r = 0;
      if (t.kind === 'star') r = ok[(j + 1) * width + i] || (i < n ? ok[j * width + i + 1] : 0);
      else if (i < n && (t.kind === 'one' || t.text === vf[i])) r = ok[(j + 1) * width + i + 1];
      ok[j * width + i] = r;
    }
  }
  if (!ok[0]) return null;
  if (!wantCaptures) return [];
  const caps: string[] = [value];
  let i = 0;
  for (let j = 0; j < m; j++) {
    const t = toks[j];
    if (t.kind === 'star') {
      let k = i;
      while (!ok[(j + 1) * width + k]) k++;
      caps.push(v.slice(i, k).join(''));
      i = k;
    } else {
      if (t.kind === 'one') caps.push(v[i]);
      i++;
    }
  }
  return caps;
}

/** Whether `value` contains `key` under i;ascii-casemap, without copying the (possibly long) value. */
function containsCasemap(value: string, key: string): boolean {
  const k = asciiLower(key);
  const n = value.length - k.length;
  outer: for (let i = 0; i <= n; i++) {
    for (let j = 0; j < k.length; j++) {
      let c = value.charCodeAt(i + j);
      if (c >= 65 && c <= 90) c += 32;
      if (c !== k.charCodeAt(j)) continue outer;
    }
    return true;
  }
  return false;
}

/** One value against one key. Returns null for no match, else the match captures (possibly empty). */
export function matchOne(m: Matcher, value: string, key: string, wantCaptures: boolean): string[] | null {
  switch (m.type) {
    case 'is':
      if (m.comparator === 'i;octet' || m.comparator === 'i;ascii-casemap') return sameOctets(m.comparator, value, key) ? [] : null;
      return compare(m.comparator, value, key) === 0 ? [] : null;
    case 'contains':
      if (m.comparator === 'i;ascii-casemap') return containsCasemap(value, key) ? [] : null;
      return value.includes(key) ? [] : null;
    case 'matches': return globMatch(m.comparator, value, key, wantCaptures);
    case 'value': return relate(m.relation, compare(m.comparator, value, key)) ? [] : null;
    case 'count': return relate(m.relation, compare(m.comparator, value, key)) ? [] : null;
  }
}
