import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { evaluateRecords, queryKey, type AnyAnswer, type Inconclusive, type Observations } from './compare.js';
import type { DnsQueries, OpenQueries } from './resolver.js';
import { nextDomainState, provesOwnership } from './status.js';
import type { DnsStore } from './store.js';

/** What a check shows: the same shape as a completed domain-create task's results. */
export interface CheckResult {
  domain: string;
  status: string;
  records: Array<{ type: string; name: string; value: string; priority: string; status: string }>;
}

/** The answers gathered for one hostname, before anything is written. */
export interface Observed {
  domainId: number;
  hostname: string;
  answers: Observations;
  inconclusive: Inconclusive | null;
}

/** The outcome of `check`: done, inconclusive (only `last_checked_at` moved), or the hostname is gone. */
export type CheckOutcome =
  | { kind: 'checked'; result: CheckResult }
  | { kind: 'inconclusive'; reason: string }
  | { kind: 'gone' };

/** The sentence for a check that could not conclude; it becomes the failed task's reason. */
export const inconclusiveReason = (hostname: string, i: Inconclusive) =>
  `DNS check of ${hostname} was inconclusive (${i.code} looking up ${i.type} ${i.name}); statuses are unchanged`;

/** The query that checks a record of this type (TXT for any type without one of its own). */
function ask(q: DnsQueries, type: string, name: string): Promise<AnyAnswer> {
  switch (type.toUpperCase()) {
    case 'MX': return q.mx(name);
    case 'SRV': return q.srv(name);
    case 'CNAME': return q.cname(name);
    default: return q.txt(name);
  }
}

/**
 * Checks one hostname's published records: `observe` asks DNS (no database writes, may overlap
 * with other work), `apply` writes the statuses in the caller's transaction.
 */
export function createDnsChecker(deps: {
  db: Db; store: DnsStore; clock: Clock; logger: Logger; queries: OpenQueries;
  /** The records as task results show them (the domains capability's view). */
  recordsView: (db: Db, domainId: number) => Promise<CheckResult['records']>;
  /**
   * Adds the records a hostname provisioned by an older version lacks (they go at the end, "Not
   * checked", and are checked from the next check on).
   */
  addMissingRecords?: (db: Db, domainId: number) => Promise<void>;
}) {
  const { db, store, clock, logger } = deps;
  // Inconclusive checks in a row, in this process, each of a hostname whose previous check here
  // concluded: a long streak means the resolver is down. A hostname that keeps failing counts
  // once, so one tenant's dead zones checked again and again do not look like a resolver outage
  // and slow everyone's checks to the scheduler's single probe.
  let streak = 0;
  const failing = new Set<string>();

  /** Queries every distinct name and type of the hostname's records; null when the hostname does not exist. */
  async function observe(hostname: string): Promise<Observed | null> {
    const target = await store.target(db, hostname);
    if (!target) {
      // A deleted hostname is no longer checked: it must not stay in `failing` for good.
      failing.delete(hostname);
      return null;
    }
    const q = deps.queries();
    const wanted = new Map<string, { type: string; name: string }>();
    for (const r of target.records) wanted.set(queryKey(r.type, r.name), r);
    const answers = new Map<string, AnyAnswer>();
    await Promise.all([...wanted].map(async ([key, r]) => { answers.set(key, await ask(q, r.type, r.name)); }));
    const verdict = evaluateRecords(target.records, answers);
    if (wanted.size > 0) {
      if (!verdict.inconclusive) {
        streak = 0;
        failing.delete(hostname);
      } else if (!failing.has(hostname)) {
        streak++;
        failing.add(hostname);
        // The first of a streak is logged; the rest would repeat it.
        if (streak === 1) logger.warn({ hostname, ...verdict.inconclusive }, 'DNS check inconclusive');
      }
    }
    return { domainId: target.id, hostname, answers, inconclusive: verdict.inconclusive };
  }

  /** Writes a conclusive check's statuses (re-read inside `trx`, so a concurrent change is not lost). */
  async function apply(trx: Db, observed: Observed): Promise<CheckResult> {
    const now = clock.now();
    const target = await store.target(trx, observed.hostname);
    if (!target || target.id !== observed.domainId) return { domain: observed.hostname, status: 'deleted', records: [] };
    const verdict = evaluateRecords(target.records, observed.answers);
    if (verdict.inconclusive) {
      await store.markChecked(trx, target.id, now);
      return { domain: target.hostname, status: target.status, records: await deps.recordsView(trx, target.id) };
    }
    const checked = target.records.map((r, i) => ({ ...r, status: verdict.statuses[i] ?? r.status }));
    const prev = { status: target.status, failedChecks: target.failed_checks, verifiedAt: target.verified_at };
    const next = nextDomainState(prev, provesOwnership(target.hostname, checked), now);
    await store.applyCheck(trx, target.id, next, target.records.map((r, i) => ({ id: r.id, status: verdict.statuses[i] })), now);
    if (target.records.length > 0) await deps.addMissingRecords?.(trx, target.id);
    if (next.status !== prev.status) logger.info({ hostname: target.hostname, from: prev.status, to: next.status }, 'domain DNS status changed');
    else logger.debug({ hostname: target.hostname, status: next.status, failed_checks: next.failedChecks }, 'domain DNS checked');
    return { domain: target.hostname, status: next.status, records: await deps.recordsView(trx, target.id) };
  }

  /** Stamps the hostname as checked without changing a status (the answers were inconclusive). */
  const markInconclusive = (observed: Observed) => store.markChecked(db, observed.domainId, clock.now());

  return {
    /** How many hostnames in a row newly failed to conclude (0 after any conclusive check). */
    failureStreak: () => streak,
    observe,
    apply,
    markInconclusive,

    /** One whole check outside the task queue (the task handler splits it into prepare and run). */
    async check(hostname: string): Promise<CheckOutcome> {
      const observed = await observe(hostname);
      if (!observed) return { kind: 'gone' };
      if (observed.inconclusive) {
        await markInconclusive(observed);
        return { kind: 'inconclusive', reason: inconclusiveReason(hostname, observed.inconclusive) };
      }
      const result = await db.transaction().execute((trx) => apply(trx, observed));
      return { kind: 'checked', result };
    },
  };
}
export type DnsChecker = ReturnType<typeof createDnsChecker>;
