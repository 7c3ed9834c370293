import { domainToASCII } from 'node:url';
import type { Insertable } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { OutboundClaims } from './claims.js';
import { storableText } from '../db/storable-text.js';
import { createCommitBatcher } from './commit-batch.js';
import { buildDsn } from './dsn.js';
import { headerSection, statusOf } from './message.js';
import type { Preparer } from './prepare.js';
import { nextAttemptAt, type RetryPolicy } from './schedule.js';
import type { OutboundRow, OutboundStore } from '../mailstore/outbound-store.js';
import type { OutboundTable } from '../db/tables/outbound.js';
import type { LocalTransmitter, RemoteTransmitter, TryResult } from './transmit.js';

/** Most recipients one transaction carries (RFC 5321 4.5.3.1.8 asks receivers to take 100). */
const MAX_RCPTS = 100;
/** Most items read per look at the queue. */
const CLAIM_LIMIT = 500;
/**
 * How long groups read from the queue but not started yet may wait for a free slot before the
 * queue is read again. They keep the worker from reading 500 rows each time one delivery ends;
 * bounded, so what a delivery works from is never much older than when it was read.
 */
const PENDING_MAX_AGE_MS = 1_000;

/**
 * Local errors in a row (a fault of ours with this item: its stored data, its message, its
 * outcome's write) after which an item is set aside as failed. Counted in memory: a restart gives
 * an item a fresh few tries, never an endless loop within one run.
 */
export const FAULT_LIMIT = 3;
/** How the reply of an item set aside begins (the metrics count them by it). */
export const SET_ASIDE_REPLY = '554 5.3.0 set aside';

/** What a try ended in, for the metrics. */
export type AttemptResult = 'sent' | 'deferred' | 'failed';

/** Items that travel together: one message, one envelope sender, one recipient domain. */
interface Group {
  domain: string;
  items: OutboundRow[];
}

const domainOf = (address: string) => {
  const d = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return domainToASCII(d) || d;
};

/** Groups due items into transactions (a recipient twice in one group waits for the next look). */
export function groupItems(rows: OutboundRow[]): Group[] {
  const groups = new Map<string, Group & { rcpts: Set<string> }>();
  const out: Group[] = [];
  for (const r of rows) {
    const domain = domainOf(r.rcpt_to);
    const base = [r.kind, r.inbound_id, r.message_ref, r.mail_from, r.via_domain, domain].join('\u0000');
    let key = base;
    let n = 0;
    let g = groups.get(key);
    // A full group (or one that already has this recipient) continues in a new one.
    while (g && (g.items.length >= MAX_RCPTS || g.rcpts.has(r.rcpt_to.toLowerCase()))) {
      key = `${base}\u0000${++n}`;
      g = groups.get(key);
    }
    if (!g) {
      g = { domain, items: [], rcpts: new Set() };
      groups.set(key, g);
      out.push(g);
    }
    g.items.push(r);
    g.rcpts.add(r.rcpt_to.toLowerCase());
  }
  return out;
}

/**
 * The delivery worker: looks at the queue when woken and at least every `pollMs`, claims due items
 * (claims.ts: in memory on SQLite, where a crash leaves them queued, so they are tried again after
 * a restart; advisory locks of this node on PostgreSQL, dropped with a dead node), sends each
 * group as one transaction, `concurrency` groups at a time, and commits what came of every
 * recipient: sent; retried later (DECISIONS.md section 12's schedule, counted from this try);
 * failed, with a DSN to the original sender unless that was `<>` or one was already sent.
 */
export function createOutboundWorker(deps: {
  db: Db; store: OutboundStore; clock: Clock; logger: Logger; policy: RetryPolicy; hostname: string;
  prepare: Preparer; remote: RemoteTransmitter; local: LocalTransmitter; isHosted: (domain: string) => Promise<boolean>;
  onAttempt: (result: AttemptResult) => void; pollMs: number; concurrency: number;
  /** How due items are taken and senders woken (claims.ts): in memory on SQLite, advisory locks across nodes on PostgreSQL. */
  claims: OutboundClaims;
}) {
  const { db, store, clock, logger, claims } = deps;
  const commit = createCommitBatcher(db);
  const busy = new Set<number>();
  const inflight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let ticking = false;
  let again = false;
  let stopped = true;
  let listening = false;

  function schedule(ms: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => { timer = null; void tick(); }, ms);
  }

  /** Groups read from the queue and not started yet (their items are in `busy`), and when they were read. */
  let pending: Group[] = [];
  let pendingAt = 0;

  /** Forgets the groups not started, and gives up their claims (on PostgreSQL, other nodes may take them). */
  async function dropPending(): Promise<void> {
    const ids = pending.flatMap((g) => g.items.map((i) => i.id));
    for (const id of ids) busy.delete(id);
    pending = [];
    await claims.release(ids);
  }

  /** Claims due items (not in flight, not pending) into `pending`. */
  async function readQueue(): Promise<void> {
    await dropPending();
    const rows = await claims.next(clock.now(), CLAIM_LIMIT, [...busy]);
    pending = groupItems(rows);
    pendingAt = performance.now();
    for (const g of pending) for (const i of g.items) busy.add(i.id);
  }

  function startGroup(g: Group): void {
    const p: Promise<void> = runGroup(g)
      .catch((err) => fault(g.items, err))
      // After the outcome is committed (runGroup and fault wait for it).
      .then(() => claims.release(g.items.map((i) => i.id)))
      .catch((err) => logger.error({ err }, 'releasing outbound items failed'))
      .finally(() => {
        for (const i of g.items) busy.delete(i.id);
        inflight.delete(p);
        schedule(0);
      });
    inflight.add(p);
  }

  async function tick(): Promise<void> {
    if (stopped) return;
    if (ticking) { again = true; return; }
    ticking = true;
    try {
      // The queue is read at most once a look: when nothing read before waits, or it waited too long.
      let read = false;
      while (deps.concurrency - inflight.size > 0) {
        if (pending.length === 0 || performance.now() - pendingAt > PENDING_MAX_AGE_MS) {
          if (read) break;
          read = true;
          await readQueue();
          // A stop that came while the queue was read starts nothing new (the database is about to close).
          if (stopped) { await dropPending(); return; }
          if (pending.length === 0) break;
        }
        startGroup(pending.shift()!);
      }
    } catch (err) {
      logger.error({ err }, 'reading the outbound queue failed');
    } finally {
      ticking = false;
    }
    if (again) { again = false; schedule(0); } else schedule(deps.pollMs);
  }

  /** Local errors in a row per item (FAULT_LIMIT). */
  const faults = new Map<number, number>();

  /**
   * A fault of ours with these items (a database or file error, a message that cannot be read or
   * rendered): each counts it; below FAULT_LIMIT it is a temporary failure, so the item waits for
   * its next delay instead of being picked up again at once; at the limit it is set aside, failed
   * with the reason (and a DSN), logged once.
   */
  async function fault(items: OutboundRow[], err: unknown): Promise<void> {
    const reason = storableText(String((err as Error)?.message ?? err), 200);
    const retry: OutboundRow[] = [];
    const aside: OutboundRow[] = [];
    for (const i of items) {
      const n = (faults.get(i.id) ?? 0) + 1;
      if (n >= FAULT_LIMIT) { faults.delete(i.id); aside.push(i); } else { faults.set(i.id, n); retry.push(i); }
    }
    if (retry.length) {
      logger.warn({ err, items: retry.map((i) => i.id) }, 'outbound delivery failed unexpectedly; the items are retried later');
      const response = `451 4.3.0 local error: ${reason}`;
      await apply(retry, { results: retry.map((i) => ({ rcpt: i.rcpt_to, outcome: 'temporary', response })) }, null, { counted: true, dsn: true })
        .catch((again) => logger.error({ err: again, items: retry.map((i) => i.id) }, 'recording an outbound fault failed'));
    }
    if (aside.length) {
      logger.error({ err, items: aside.map((i) => i.id) }, `outbound items failed unexpectedly ${FAULT_LIMIT} times in a row; set aside as failed`);
      const response = `${SET_ASIDE_REPLY} after ${FAULT_LIMIT} local errors: ${reason}`;
      try {
        await apply(aside, { results: aside.map((i) => ({ rcpt: i.rcpt_to, outcome: 'permanent', response })), status: '5.3.0' }, null, { counted: true, dsn: true });
      } catch {
        // Even its DSN cannot be queued: the plainest write there is, so it is never claimed again.
        for (const i of aside) {
          await store.markFailed(db, i.id, `${SET_ASIDE_REPLY} after ${FAULT_LIMIT} local errors`, true, clock.now())
            .catch((again) => logger.error({ err: again, outbound: i.id }, 'setting an outbound item aside failed'));
        }
      }
    }
  }

  /**
   * Tries a group and records what came of it. One bad item never holds back the others of its
   * group: when readying or sending the group fails, each item is tried again alone at once (a
   * forward's own stored data is read for the first item only), and when recording the outcome
   * fails, each item's outcome is written alone; whatever still fails alone is that item's fault.
   */
  async function runGroup(g: Group): Promise<void> {
    let tried: Awaited<ReturnType<typeof tryGroup>>;
    try {
      tried = await tryGroup(g);
    } catch (err) {
      if (g.items.length > 1) {
        logger.warn({ err, items: g.items.map((i) => i.id) }, 'an outbound group failed; trying its items one by one');
        await Promise.all(g.items.map((item) => runGroup({ domain: g.domain, items: [item] })));
        return;
      }
      await fault(g.items, err);
      return;
    }
    try {
      await apply(g.items, tried.result, tried.original, tried.o);
    } catch (err) {
      if (g.items.length === 1) { await fault(g.items, err); return; }
      for (const item of g.items) {
        const own = { ...tried.result, results: tried.result.results.filter((r) => r.rcpt === item.rcpt_to) };
        await apply([item], own, tried.original, tried.o).catch((e) => fault([item], e));
      }
      return;
    }
    for (const i of g.items) faults.delete(i.id);
  }

  /** Readies a group's message and sends it (or finds it is not to be sent). */
  async function tryGroup(g: Group): Promise<{ result: TryResult; original: Buffer | null; o: { counted: boolean; dsn: boolean } }> {
    const first = g.items[0];
    const ready = await deps.prepare(first);
    const rcpts = g.items.map((i) => i.rcpt_to);
    if (ready.kind === 'refused') {
      return { result: { results: rcpts.map((rcpt) => ({ rcpt, outcome: 'permanent', response: ready.response })), status: ready.status },
        original: ready.original, o: { counted: false, dsn: ready.dsn } };
    }
    const result = (await deps.isHosted(g.domain))
      ? await deps.local(first.id, ready.mailFrom, rcpts, ready.raw, first.kind === 'dsn')
      : await deps.remote(g.domain, ready.mailFrom, rcpts, ready.raw);
    return { result, original: ready.original, o: { counted: true, dsn: true } };
  }

  async function apply(items: OutboundRow[], tried: TryResult, original: Buffer | null, o: { counted: boolean; dsn: boolean }): Promise<void> {
    const now = clock.now();
    const byRcpt = new Map(tried.results.map((r) => [r.rcpt, r]));
    const sent: OutboundRow[] = [];
    const retry: Array<{ item: OutboundRow; at: number; response: string }> = [];
    const failed: Array<{ item: OutboundRow; response: string; status: string }> = [];
    for (const item of items) {
      const r = byRcpt.get(item.rcpt_to) ?? { outcome: 'temporary' as const, response: 'no reply for this recipient' };
      if (r.outcome === 'sent') { sent.push(item); continue; }
      if (r.outcome === 'temporary') {
        const at = nextAttemptAt(deps.policy, item.attempts + 1, item.created_at, now);
        if (at !== null) { retry.push({ item, at, response: r.response }); continue; }
        failed.push({ item, response: r.response, status: '4.4.7' });
        continue;
      }
      failed.push({ item, response: r.response, status: tried.status ?? statusOf(r.response, true) });
    }
    // DSNs are built before the transaction (they are pure), then queued in it with the failures they report.
    const dsns: Array<{ item: OutboundRow; raw: Buffer }> = [];
    if (o.dsn) {
      for (const f of failed) {
        if (f.item.mail_from === '' || f.item.dsn_sent || f.item.kind === 'dsn') continue;
        try {
          const raw = await buildDsn({
            reportingMta: deps.hostname, originalSender: f.item.mail_from, recipient: f.item.rcpt_to, status: f.status,
            diagnostic: f.response, remoteMta: tried.remoteMta ?? null,
            originalHeaders: original ? headerSection(original) : Buffer.from(''), arrivalDate: new Date(f.item.created_at), now: new Date(now),
          });
          dsns.push({ item: f.item, raw });
        } catch (err) {
          logger.error({ err, outbound: f.item.id }, 'building a DSN failed');
        }
      }
    }
    await commit(async (trx) => {
      if (sent.length) await store.markSent(trx, sent.map((i) => i.id), byRcpt.get(sent[0].rcpt_to)!.response, now);
      for (const r of retry) await store.markRetry(trx, r.item.id, r.response, r.at, now);
      for (const f of failed) await store.markFailed(trx, f.item.id, f.response, o.counted, now);
      for (const d of dsns) {
        const ref = await store.putMessage(trx, d.raw, now);
        const row: Insertable<OutboundTable> = {
          tenant_id: d.item.tenant_id, kind: 'dsn', email_id: null, inbound_id: null, message_ref: ref, mail_from: '', rcpt_to: d.item.mail_from,
          via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
        };
        await store.insert(trx, [row]);
        await store.markDsnSent(trx, d.item.id);
      }
    });
    if (o.counted) {
      for (const _ of sent) deps.onAttempt('sent');
      for (const _ of retry) deps.onAttempt('deferred');
      for (const _ of failed) deps.onAttempt('failed');
    }
    for (const f of failed) logger.info({ outbound: f.item.id, kind: f.item.kind, status: f.status, response: f.response }, 'outbound item failed');
  }

  return {
    /** Starts looking at the queue. */
    start(): void {
      stopped = false;
      if (!listening) {
        listening = true;
        claims.listen(() => schedule(0)).catch((err) => logger.error({ err }, 'listening for outbound wake-ups failed'));
      }
      schedule(0);
    },
    /** Looks at the queue now (new or retried items). */
    wake(): void { schedule(0); },
    /** Stops looking; resolves once the groups in flight have settled. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await dropPending().catch((err) => logger.error({ err }, 'releasing outbound items failed'));
      await Promise.allSettled([...inflight]);
    },
    /** Groups in flight now. */
    inflight: () => inflight.size,
  };
}
export type OutboundWorker = ReturnType<typeof createOutboundWorker>;
