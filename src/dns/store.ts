import type { Db } from '../db/connection.js';
import type { RecordStatus } from './compare.js';
import type { CheckSchedule, ScheduleRow } from './schedule.js';
import { CHECKED_STATUSES, type DomainDnsState } from './status.js';

/** The task kind of one hostname's DNS check. */
export const CHECK_KIND = 'domain.check';

/** A hostname due for the scheduler, with the tenant its task is filed under. */
export interface CandidateRow extends ScheduleRow {
  tenantId: number;
}

/** Every query of the DNS verification loop. */
export function createDnsStore() {
  return {
    /** A hostname's DNS state and its records (with row ids), or undefined when it does not exist. */
    async target(db: Db, hostname: string) {
      const d = await db.selectFrom('domains')
        .select(['id', 'hostname', 'status', 'failed_checks', 'verified_at'])
        .where('hostname', '=', hostname).executeTakeFirst();
      if (!d) return undefined;
      const records = await db.selectFrom('dns_records').select(['id', 'type', 'name', 'value', 'status'])
        .where('domain_id', '=', d.id).orderBy('position').execute();
      return { ...d, records };
    },

    /** Stores the outcome of a conclusive check: each record's status and the hostname's state. */
    async applyCheck(db: Db, domainId: number, state: DomainDnsState, records: Array<{ id: number; status: RecordStatus | null }>, now: number) {
      for (const r of records) {
        await db.updateTable('dns_records')
          .set(r.status === null ? { checked_at: now } : { status: r.status, checked_at: now })
          .where('id', '=', r.id).where('domain_id', '=', domainId).execute();
      }
      await db.updateTable('domains')
        .set({ status: state.status, failed_checks: state.failedChecks, verified_at: state.verifiedAt, last_checked_at: now })
        .where('id', '=', domainId).execute();
    },

    /** Records that a check ran without changing anything (it was inconclusive). */
    markChecked: (db: Db, domainId: number, now: number) =>
      db.updateTable('domains').set({ last_checked_at: now }).where('id', '=', domainId).execute(),

    /** Hostnames with a check queued or running. */
    busyHostnames: (db: Db) =>
      db.selectFrom('tasks').select('domain').where('status', 'in', ['queued', 'running']).where('kind', '=', CHECK_KIND)
        .execute().then((rows) => new Set(rows.map((r) => r.domain))),

    /** A check of this hostname that this key queued and that has not started yet, if any. */
    queuedCheckOf: (db: Db, keyId: number, hostname: string) =>
      db.selectFrom('tasks').select('id').where('status', '=', 'queued').where('kind', '=', CHECK_KIND)
        .where('key_id', '=', keyId).where('domain', '=', hostname).orderBy('id').executeTakeFirst().then((r) => r?.id),

    /**
     * Hostnames that may be due at `now`: the schedule's rules as a filter (schedule.ts decides
     * exactly), never-checked and longest-unchecked first, at most `max` rows.
     */
    async candidates(db: Db, now: number, s: CheckSchedule, max: number): Promise<CandidateRow[]> {
      const rows = await db.selectFrom('domains')
        .select(['hostname', 'status', 'tenant_id', 'created_at', 'last_checked_at'])
        .where('status', 'in', [...CHECKED_STATUSES])
        .where((eb) => eb.or([
          eb('last_checked_at', 'is', null),
          eb.and([eb('status', '=', 'pending'), eb('created_at', '>', now - s.pendingFastWindowMs), eb('last_checked_at', '<=', now - s.pendingFastEveryMs + s.graceMs)]),
          eb.and([eb('status', '=', 'pending'), eb('last_checked_at', '<=', now - s.pendingEveryMs + s.graceMs)]),
          eb.and([eb('status', '=', 'verified'), eb('last_checked_at', '<=', now - s.verifiedEveryMs + s.graceMs)]),
          eb.and([eb('status', '=', 'unverified'), eb('last_checked_at', '<=', now - s.unverifiedEveryMs + s.graceMs)]),
        ]))
        .orderBy((eb) => eb.fn.coalesce('last_checked_at', 'created_at'))
        .orderBy('hostname')
        .limit(max)
        .execute();
      return rows.map((r) => ({ hostname: r.hostname, status: r.status, tenantId: r.tenant_id, createdAt: r.created_at, lastCheckedAt: r.last_checked_at }));
    },
  };
}
export type DnsStore = ReturnType<typeof createDnsStore>;
