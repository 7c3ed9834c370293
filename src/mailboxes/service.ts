import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { serializedTransaction } from '../db/provisioning-lock.js';
import { domainOf, normalizeAddress } from '../message/address.js';
import { normalizeHostname } from '../message/hostname.js';
import type { DomainStore } from '../domains/store.js';
import { notFound, unprocessable } from '../errors.js';
import { ddmmyyyy } from '../format.js';
import type { TaskQueue } from '../tasks/queue.js';
import type { ApiKey, TenantService } from '../tenants/service.js';
import { localPartCandidates } from './local-parts.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';
import type { MailboxStore } from './store.js';

/**
 * What a create task carries: the password as sent (a string, or 0 for generated ones) and the
 * quota in MB (0 or absent = unlimited; absent in tasks queued before quotas could be chosen).
 */
export interface SinglePayload { domainId: number; address: string; displayName: string; password: string | 0; quotaMb?: number }
/**
 * The bulk variant: every requested address, in candidate order. `cooldown: false` marks a run
 * that took no cooldown (legacy variant B), so a failing run has none to give back.
 */
export interface BulkPayload { domainId: number; addresses: string[]; displayName: string; password: string | 0; quotaMb?: number; cooldown?: boolean }

/** Cooldown scope of bulk mailbox creation (per key and hostname). */
export const BULK_COOLDOWN = 'mailbox-bulk';

/** Checks the password rule of SPEC.md; returns the password, or 0 for a generated one. */
export function checkPassword(value: string | number): string | 0 {
  if (value === 0) return 0;
  if (typeof value !== 'string') throw unprocessable('Params.password must be a string of at least 8 characters or the integer 0');
  if (value === '0') throw unprocessable('Params.password must be the integer 0 (not the string "0") to generate a password');
  if ([...value].length < MIN_PASSWORD_LENGTH) throw unprocessable(`Params.password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if ([...value].length > MAX_PASSWORD_LENGTH) throw unprocessable(`Params.password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return value;
}

/** A refusal for a hostname whose slots are used up (or would be by this request). */
export function slotsRefusal(hostname: string, allowed: number, left: number, needed: number) {
  return unprocessable(left <= 0
    ? `No mailbox slots left on ${hostname} (all ${allowed} are used)`
    : `Only ${left} of ${allowed} mailbox slots left on ${hostname}; this request needs ${needed}`);
}

/** The rules of mailbox creation and listing. */
export function createMailboxService(deps: {
  db: Db; store: MailboxStore; domainStore: DomainStore; queue: TaskQueue; tenants: TenantService; clock: Clock; config: Readonly<Config>;
}) {
  const { db, store, domainStore, queue, tenants, config } = deps;

  async function ownedDomain(trx: Db, key: ApiKey, hostname: string) {
    const domain = await domainStore.ownedByHostname(trx, key.tenantId, hostname);
    if (!domain) throw notFound('Domain not found');
    return domain;
  }

  return {
    /** Validates a single create and enqueues it (DECISIONS.md section 5). */
    async createSingle(key: ApiKey, input: { domain: string; fullname: string; address: string; password: string | number; quotaMb?: number }) {
      const host = normalizeHostname(input.domain);
      const password = checkPassword(input.password);
      const address = normalizeAddress(input.address);
      if (domainOf(address) !== host) throw unprocessable(`Params.email_id must be an address on ${host}`);
      return serializedTransaction(db, async (trx) => {
        const domain = await ownedDomain(trx, key, host);
        if ((await store.takenAmong(trx, [address])).size > 0) throw unprocessable(`Params.email_id ${address} already exists`);
        // Requests accepted a moment ago whose tasks have not run yet count as done: a 200 here
        // must not turn into a failed task because of a request that came just before.
        const pending = await store.pendingAddresses(trx, host);
        if (pending.has(address)) throw unprocessable(`Params.email_id ${address} is already being created`);
        const left = domain.total_mailbox_allowed - (await store.countForDomain(trx, domain.id)) - pending.size;
        if (left < 1) throw slotsRefusal(host, domain.total_mailbox_allowed, left, 1);
        const payload: SinglePayload = { domainId: domain.id, address, displayName: input.fullname, password, quotaMb: input.quotaMb ?? 0 };
        const taskId = await queue.enqueue(trx, { kind: 'mailbox.single', tenantId: key.tenantId, keyId: key.id, domain: host, payload });
        await store.markForRedaction(trx, taskId);
        return taskId;
      });
    },

    /**
     * Derives the requested addresses, checks slots and the cooldown, and enqueues the bulk create.
     * `cooldown: false` skips the bulk cooldown (legacy variant B has none).
     */
    async createBulk(key: ApiKey, input: { domain: string; fullname: string; count: number; password: string | number; quotaMb?: number; cooldown?: boolean }) {
      const cooldown = input.cooldown ?? true;
      const host = normalizeHostname(input.domain);
      const password = checkPassword(input.password);
      const parts = localPartCandidates(input.fullname, input.count);
      if (!parts) throw unprocessable('Email_fullname must contain letters or digits to derive addresses from');
      const addresses = parts.map((p) => `${p}@${host}`);
      return serializedTransaction(db, async (trx) => {
        const domain = await ownedDomain(trx, key, host);
        if (cooldown) await tenants.checkCooldown(trx, BULK_COOLDOWN, key.id, host);
        const taken = await store.takenAmong(trx, addresses);
        const pending = await store.pendingAddresses(trx, host);
        const needed = addresses.filter((a) => !taken.has(a) && !pending.has(a)).length;
        const left = domain.total_mailbox_allowed - (await store.countForDomain(trx, domain.id)) - pending.size;
        if (needed > left) throw slotsRefusal(host, domain.total_mailbox_allowed, left, needed);
        if (cooldown) await tenants.markCooldown(trx, BULK_COOLDOWN, key.id, host);
        const payload: BulkPayload = { domainId: domain.id, addresses, displayName: input.fullname, password, quotaMb: input.quotaMb ?? 0, cooldown };
        const taskId = await queue.enqueue(trx, { kind: 'mailbox.bulk', tenantId: key.tenantId, keyId: key.id, domain: host, payload });
        await store.markForRedaction(trx, taskId);
        return taskId;
      });
    },

    /** The mailboxes of an owned domain keyed by address, as GET /v1/list/mailbox shows them. */
    async list(key: ApiKey, hostname: string, includeCredentials: boolean) {
      const host = normalizeHostname(hostname);
      const domain = await ownedDomain(db, key, host);
      const results: Record<string, { provisioning_status: string; mailbox_quota: string; created_at: string; imap_credentials?: object; submission_credentials?: object }> = {};
      for (const m of await store.listForDomain(db, domain.id)) {
        results[m.address] = {
          provisioning_status: m.status,
          mailbox_quota: `${m.quota_mb}MB`,
          created_at: ddmmyyyy(m.created_at),
          // Submission sits beside IMAP (DECISIONS.md section 13): the STARTTLS port, 587 when it is 0 or unset.
          ...(includeCredentials ? {
            imap_credentials: { host: config.hostname, port: config.imapPort || 993, encryption: 'ssl' },
            submission_credentials: { host: config.hostname, port: config.submissionPort || 587, encryption: 'starttls' },
          } : {}),
        };
      }
      return { domain: host, results };
    },
  };
}
export type MailboxService = ReturnType<typeof createMailboxService>;
