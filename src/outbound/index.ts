import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { Counter, Gauge } from 'prom-client';
import type { Core } from '../core.js';
import { createBlobStore } from '../ingest/blobs.js';
import { databaseBlobReads } from '../ingest/postgres/blobs.js';
import { createIngestStore } from '../mailstore/inbound-store.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Ingest } from '../ingest/ports.js';
import { cachedLookup, createPromiseResolver } from '../mailauth/dns.js';
import { srsBounceResolver } from './bounces.js';
import { postgresOutboundClaims, sqliteOutboundClaims } from './claims.js';
import { cachingResolver } from './dns-cache.js';
import { createMtaSts } from './mta-sts.js';
import { createSessionPool } from './pool.js';
import { createPreparer } from './prepare.js';
import { createRouter } from './route.js';
import { outboundPruneJob } from './retention.js';
import { outboundRoutes } from './routes.js';
import { srsKey } from './secret.js';
import { createSigningThread } from '../signing/sign-thread.js';
import { createMemo, LOOKUP_HOLD_MS } from './memo.js';
import { createOutboundService } from './service.js';
import { createSrs, type Srs } from '../message/srs.js';
import { createOutboundStore } from '../mailstore/outbound-store.js';
import { createLocalTransmitter, createRemoteTransmitter } from './transmit.js';
import { createOutboundWorker } from './worker.js';
import { createOutboundSetAside } from './set-aside.js';
import { setAsideRoutes } from '../set-aside/routes.js';

/**
 * Knobs for tests only (never environment variables): where MTA-STS policies are fetched, which
 * CA vouches for test certificates, shorter network limits and a faster look at the queue.
 */
export interface OutboundTesting {
  mtaStsPort?: number;
  mtaStsCa?: string | Buffer;
  /** CA for certificates of MX hosts under an MTA-STS policy in enforce mode. */
  tlsCa?: string | Buffer;
  timeoutMs?: number;
  pollMs?: number;
  /** How long an idle session is kept for reuse. */
  idleMs?: number;
}

/** The signing thread stops after this long without a forward to sign, and is replaced when one takes longer than its timeout. */
const SIGNER_IDLE_MS = 10_000;
const SIGNER_TIMEOUT_MS = 30_000;

/** Connect, greeting and inactivity limit of a session to a remote MX. */
const SESSION_TIMEOUT_MS = 60_000;
/** How often the worker looks at the queue when nothing wakes it (retries coming due; ingest and the API wake it for new items). */
const POLL_MS = 1_000;
/**
 * Groups (transactions) in flight at once, and sessions to one MX address at once. A session
 * carries one transaction at a time, so these bound throughput to a busy destination; 20 per
 * address is Postfix's default_destination_concurrency_limit.
 */
const CONCURRENCY = 48;
const PER_HOST = 20;
/** How long a DNS answer for delivery is reused (a burst to one domain looks it up once, not per message). */
const DNS_HOLD_MS = 5_000;
/** How long an idle session is kept for the next message to the same address. */
const IDLE_MS = 5_000;
/** How long a stop waits for transactions in flight before cutting them (SIGTERM must end within 10 s). */
const STOP_GRACE_MS = 4_000;

/** This machine's own addresses (an MX pointing at one of them would loop back to us). */
function ownAddresses(smtpHost: string): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) own.add(a.address);
  if (isIP(smtpHost)) own.add(smtpHost);
  return own;
}

/**
 * The per-install SRS and the recipient resolver with SRS bounces, which the inbound paths need
 * before outbound delivery itself is installed.
 */
export function createSrsBounces(core: Core, inner: RecipientResolver): { srs: Srs; resolve: RecipientResolver } {
  const srs = createSrs(srsKey(core.installSecret));
  const store = createOutboundStore();
  return { srs, resolve: srsBounceResolver(inner, { srs, clock: core.clock, hostedTenant: (h) => store.hostedTenant(core.db, h) }) };
}

/**
 * Wires outbound delivery (DECISIONS.md section 12): the queue's store, the worker with its MX
 * routing, MTA-STS, session pool and local delivery through ingest, the API and the metrics.
 */
export function installOutbound(core: Core, deps: { srs: Srs; ingest: Ingest; resolve: RecipientResolver; testing?: OutboundTesting }) {
  const { config, db, clock, logger } = core;
  const t = deps.testing ?? {};
  const store = createOutboundStore();
  const resolver = createPromiseResolver(config.dnsServers);
  const deliveryResolver = cachingResolver(resolver, DNS_HOLD_MS);
  const mtaSts = createMtaSts({ resolver: deliveryResolver, now: () => new Date(clock.now()), httpsPort: t.mtaStsPort, ca: t.mtaStsCa });
  const pool = createSessionPool({ name: config.hostname, timeoutMs: t.timeoutMs ?? SESSION_TIMEOUT_MS, ca: t.tlsCa, perHost: PER_HOST, idleMs: t.idleMs ?? IDLE_MS });
  const route = createRouter({ resolver: deliveryResolver, mtaSts, port: config.outboundPort, allowPrivate: config.outboundAllowPrivate, own: ownAddresses(config.smtpHost) });
  const attempts = new Counter({
    name: 'mailstead_outbound_attempts_total', help: 'Outbound delivery tries by result (sent, deferred, failed)',
    labelNames: ['result'] as const, registers: [core.metrics.registry],
  });
  new Gauge({
    name: 'mailstead_outbound_queue', help: 'Outbound items by status', labelNames: ['status'] as const, registers: [core.metrics.registry],
    async collect() {
      const counts = new Map((await store.countByStatus(db)).map((r) => [r.status, Number(r.n)]));
      for (const s of ['queued', 'sent', 'failed'] as const) this.set({ status: s }, counts.get(s) ?? 0);
    },
  });

  // The worker is made below; SQLite's wake-up reaches it through this late binding.
  const wakeHere = () => worker.wake();
  const claims = core.session ? postgresOutboundClaims(core.session) : sqliteOutboundClaims(db, store, wakeHere);
  // API mail is rendered from its attachments: files of the data dir on SQLite, rows of the database on PostgreSQL (section 17).
  const blobFiles = createBlobStore(config.dataDir, () => clock.now());
  const forwardBlobs = core.backend.choose({ sqlite: () => blobFiles, postgres: () => databaseBlobReads(blobFiles, db) })();
  const signer = createSigningThread({ idleMs: SIGNER_IDLE_MS, timeoutMs: SIGNER_TIMEOUT_MS, logger });
  const worker = createOutboundWorker({
    db, store, clock, logger, hostname: config.hostname, claims,
    policy: { schedule: config.outboundRetrySchedule, maxAgeSeconds: config.outboundMaxAgeSeconds },
    prepare: createPreparer({ db, store, blobs: forwardBlobs, srs: deps.srs, clock, logger, hostname: config.hostname, signer,
      lookup: cachedLookup((name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>, () => clock.now()) }),
    remote: createRemoteTransmitter({ route, pool }),
    local: createLocalTransmitter({ ingest: deps.ingest, resolve: deps.resolve, hostname: config.hostname, now: () => clock.now() }),
    isHosted: createMemo(LOOKUP_HOLD_MS, async (domain) => (await store.hostedTenant(db, domain)) !== null),
    onAttempt: (result) => attempts.inc({ result }),
    pollMs: t.pollMs ?? POLL_MS, concurrency: CONCURRENCY,
  });
  deps.ingest.onForwardsQueued(() => worker.wake());
  // A retry through the API wakes this node's worker and, on PostgreSQL, every other node's (NOTIFY).
  const wakeAll = () => { worker.wake(); claims.wakeAll().catch((err) => logger.warn({ err }, 'waking the other nodes failed')); };
  const service = createOutboundService({ db, store, now: () => clock.now(), wake: wakeAll });
  outboundRoutes({ registry: core.registry, outbound: service });
  const ingestStore = createIngestStore();
  const prune = outboundPruneJob({ db, store, ingestStore, clock, logger });
  // Items set aside after repeated local errors: the operator's list, retry and discard, and their gauge.
  const setAside = createOutboundSetAside({ db, store, ingestStore, now: () => clock.now(), wake: wakeAll });
  setAsideRoutes({ registry: core.registry, base: '/v1/set-aside/outbound', what: 'outbound items', queue: setAside });
  new Gauge({
    name: 'mailstead_outbound_set_aside', help: 'Outbound items set aside (failed) after repeated local errors (mailstead set-aside list outbound)', registers: [core.metrics.registry],
    async collect() { this.set(await setAside.count()); },
  });
  core.cron.add(prune);
  return {
    store, service, worker,
    /** Removes finished items older than the retention (the hourly cron job, callable by tests). */
    prune: () => prune.run(),
    /** Starts delivering (items queued before a restart included). */
    start(): void { worker.start(); },
    /** Stops delivering: waits a little for transactions in flight, then cuts them (they are retried after the restart). */
    async stop(): Promise<void> {
      const settled = worker.stop();
      const grace = new Promise<void>((r) => setTimeout(r, STOP_GRACE_MS).unref());
      await Promise.race([settled, grace]);
      pool.abort();
      await settled;
      pool.close();
      await signer.close();
    },
  };
}
export type Outbound = ReturnType<typeof installOutbound>;
