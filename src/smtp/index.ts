import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Core } from '../core.js';
import type { RecipientResolver } from '../inbound/types.js';
import type { Ingest } from '../ingest/ports.js';
import type { CertificateSource } from '../tls/index.js';
import type { PreAcceptancePolicy } from '../spam/policy/types.js';
import { cachedQuota, cachedResolver } from './cache.js';
import { createRecipientCheck } from './recipients.js';
import { createSmtpListener, DEFAULT_LIMITS, type ListenerLimits } from './server.js';

/** What the SMTP capability is built on: the recipient resolver (aliases), the ingestion path (emails) and the certificate (tls). */
export interface SmtpDeps {
  resolve: RecipientResolver;
  ingest: Ingest;
  tls: CertificateSource;
  /** Spam policy before the 250 (src/spam/policy); none in listeners that need no policy. */
  policy?: PreAcceptancePolicy;
}

/**
 * Wires the SMTP ingress: the listener whose RCPT checks go through `resolve` and whose DATA goes to `ingest.acceptRaw`.
 * `start` in app.ts calls `listen`, `stop` calls `close`. Certificate swaps come from `deps.tls`.
 */
export function installSmtp(core: Core, deps: SmtpDeps, options: { limits?: Partial<ListenerLimits> } = {}) {
  const { config, logger, clock } = core;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const quota = cachedQuota((ids, incoming) => deps.ingest.overQuota(ids, Math.max(1, incoming)), clock, limits.maxSize);
  const checkRecipient = createRecipientCheck({ resolve: cachedResolver(deps.resolve, clock), quota, maxRecipients: limits.maxRecipients, hostname: config.hostname });
  const listener = createSmtpListener({ config, logger, clock, tls: deps.tls, checkRecipient, accept: (d) => deps.ingest.acceptRaw(d), overQuota: quota,
    backlogFull: () => deps.ingest.backlogFull(), policy: deps.policy, limits });

  /** Spool files left by sessions that died mid-DATA before a crash: never acknowledged, never adopted. */
  async function sweepSpool(): Promise<void> {
    const dir = join(config.dataDir, 'tmp');
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => /^smtp-[0-9a-f-]+\.eml$/.test(n)).map((n) => unlink(join(dir, n)).catch(() => undefined)));
  }

  return {
    /** Sweeps stale spool files, listens, and resolves with the real port. */
    async listen(): Promise<number> {
      await sweepSpool();
      return listener.listen();
    },
    /** Graceful stop: finishes messages in DATA, then closes the sessions. */
    close: listener.close,
    /** Open sessions and messages in flight. */
    stats: listener.stats,
  };
}
/** The SMTP capability as app.ts holds it. */
export type Smtp = ReturnType<typeof installSmtp>;
