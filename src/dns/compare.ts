/**
 * Pure comparison of the records we asked a customer to publish with what DNS answered. No I/O
 * here: the checker feeds in answers, this decides `verified`, `mismatch`, `missing` or "cannot
 * tell" (null), so every rule is unit-testable.
 */

/** What a record check concludes (DECISIONS.md section 4). */
export type RecordStatus = 'verified' | 'mismatch' | 'missing';

/** One MX answer as node:dns returns it. */
export interface MxAnswer {
  exchange: string;
  priority: number;
}

/**
 * The outcome of one DNS query: records found; `none` for NXDOMAIN or NODATA (an authoritative
 * "there is nothing"); `error` for anything that does not tell us what is published (timeout,
 * SERVFAIL, REFUSED, network errors).
 */
export type Answer<T> =
  | { kind: 'records'; records: T[] }
  | { kind: 'none' }
  | { kind: 'error'; code: string };

/** TXT records as node:dns returns them: each record a list of its character-strings. */
export type TxtAnswer = Answer<string[]>;

/** One SRV answer as node:dns returns it. */
export interface SrvAnswer {
  name: string;
  port: number;
  priority: number;
  weight: number;
}

/** Any answer one record's query can give. */
export type AnyAnswer = Answer<MxAnswer> | TxtAnswer | Answer<SrvAnswer> | Answer<string>;

/** A stored record to compare (the fields of dns_records that matter here). */
export interface ExpectedRecord {
  type: string;
  name: string;
  value: string;
}

/** The query that checks a record, as a map key: `MX example.org`. */
export const queryKey = (type: string, name: string) => `${type.toUpperCase()} ${name.toLowerCase()}`;

/** An MX target in comparable form: lower-case, without the trailing dot of a fully qualified name. */
export const normalizeMxTarget = (host: string) => host.trim().toLowerCase().replace(/\.+$/, '');

/** A TXT record's value: its character-strings (at most 255 bytes each) joined without separator (RFC 7208 3.3). */
export const joinTxt = (chunks: readonly string[]) => chunks.join('');

const TAG_LIST = /^v\s*=\s*(dkim1|dmarc1)\s*(;|$)/i;

/**
 * A TXT value in comparable form. DKIM and DMARC records are tag lists, so whitespace around and
 * inside values, tag order and a trailing `;` do not matter (RFC 6376 3.2); other values (SPF,
 * the verification token) compare with whitespace collapsed and case ignored.
 */
export function normalizeTxt(value: string): string {
  const v = value.trim();
  if (!TAG_LIST.test(v)) return v.replace(/\s+/g, ' ').toLowerCase();
  const tags = v.split(';').map((t) => t.trim()).filter(Boolean).map((t) => {
    const eq = t.indexOf('=');
    const key = (eq < 0 ? t : t.slice(0, eq)).trim().toLowerCase();
    const val = eq < 0 ? '' : t.slice(eq + 1).replace(/\s+/g, '');
    return `${key}=${key === 'v' ? val.toLowerCase() : val}`;
  });
  return tags.sort().join(';');
}

/**
 * Which kind of TXT record a value is, so that another kind at the same name (a Google site
 * verification at the apex beside our SPF) counts as "ours is missing", not "ours is wrong":
 * `v=spf1`, `v=dkim1`, `v=dmarc1`, or the text before the first `=`.
 */
export function txtFamily(value: string): string {
  const v = value.trim();
  const tagged = /^v\s*=\s*([^;\s]+)/i.exec(v);
  if (tagged) return `v=${tagged[1].toLowerCase()}`;
  const eq = v.indexOf('=');
  return (eq > 0 ? v.slice(0, eq) : v).trim().toLowerCase();
}

/**
 * An MX record's status: `verified` when one of the answers points at the expected target
 * (priority is not compared: mail still arrives), `mismatch` when MX records exist but none is
 * ours, `missing` when there are none; null when the query failed.
 */
export function compareMx(expected: string, answer: Answer<MxAnswer>): RecordStatus | null {
  if (answer.kind === 'error') return null;
  if (answer.kind === 'none' || answer.records.length === 0) return 'missing';
  const want = normalizeMxTarget(expected);
  return answer.records.some((r) => normalizeMxTarget(r.exchange) === want) ? 'verified' : 'mismatch';
}

/**
 * A TXT record's status: `verified` when a record at the name equals ours, `mismatch` when a
 * record of the same kind is there with another value, `missing` otherwise; null when the query
 * failed.
 */
export function compareTxt(expected: string, answer: TxtAnswer): RecordStatus | null {
  if (answer.kind === 'error') return null;
  if (answer.kind === 'none') return 'missing';
  const values = answer.records.map(joinTxt);
  const want = normalizeTxt(expected);
  if (values.some((v) => normalizeTxt(v) === want)) return 'verified';
  const family = txtFamily(expected);
  return values.some((v) => txtFamily(v) === family) ? 'mismatch' : 'missing';
}

/**
 * An SRV record's status (ours is `<weight> <port> <target>`): `verified` when an answer has our
 * port and target (priority and weight are not compared: clients still find the server),
 * `mismatch` when SRV records exist but none is ours, `missing` when there are none.
 */
export function compareSrv(expected: string, answer: Answer<SrvAnswer>): RecordStatus | null {
  if (answer.kind === 'error') return null;
  if (answer.kind === 'none' || answer.records.length === 0) return 'missing';
  const [, port, target] = expected.trim().split(/\s+/);
  const want = normalizeMxTarget(target ?? '');
  return answer.records.some((r) => String(r.port) === port && normalizeMxTarget(r.name) === want) ? 'verified' : 'mismatch';
}

/** A CNAME record's status: `verified` when it points at our target, `mismatch` when elsewhere, `missing` when absent. */
export function compareCname(expected: string, answer: Answer<string>): RecordStatus | null {
  if (answer.kind === 'error') return null;
  if (answer.kind === 'none' || answer.records.length === 0) return 'missing';
  const want = normalizeMxTarget(expected);
  return answer.records.some((r) => normalizeMxTarget(r) === want) ? 'verified' : 'mismatch';
}

/** One record's status from the answer to its query. */
function compareRecord(r: ExpectedRecord, a: AnyAnswer): RecordStatus | null {
  switch (r.type.toUpperCase()) {
    case 'MX': return compareMx(r.value, a as Answer<MxAnswer>);
    case 'SRV': return compareSrv(r.value, a as Answer<SrvAnswer>);
    case 'CNAME': return compareCname(r.value, a as Answer<string>);
    default: return compareTxt(r.value, a as TxtAnswer);
  }
}

/** The answers of one check, by `queryKey`. */
export type Observations = ReadonlyMap<string, AnyAnswer>;

/** A failed query that makes a whole check inconclusive. */
export interface Inconclusive {
  type: string;
  name: string;
  code: string;
}

/**
 * Every record's status from one round of answers, in the records' order; or the first query that
 * failed, in which case nothing may change (a timeout is not evidence that a record is missing).
 * A record whose query was not made keeps its status (`null`).
 */
export function evaluateRecords(records: readonly ExpectedRecord[], answers: Observations):
  { inconclusive: Inconclusive } | { inconclusive: null; statuses: Array<RecordStatus | null> } {
  for (const r of records) {
    const a = answers.get(queryKey(r.type, r.name));
    if (a?.kind === 'error') return { inconclusive: { type: r.type.toUpperCase(), name: r.name, code: a.code } };
  }
  const statuses = records.map((r) => {
    const a = answers.get(queryKey(r.type, r.name));
    return a ? compareRecord(r, a) : null;
  });
  return { inconclusive: null, statuses };
}
