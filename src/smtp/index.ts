import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Core } from '../core.js';
import type { Ingest, RecipientResolver } from '../ingest/types.js';
import { createAuthenticator } from './auth.js';
import { createRawParser } from './parse.js';
import { createRecipientCheck, type QuotaCheck } from './recipients.js';
import { createSmtpListener, DEFAULT_LIMITS, type SmtpLimits } from './server.js';

/** What the SMTP capability is built on: the recipient resolver (aliases) and the ingestion path (emails). */
export interface SmtpDeps {
  resolve: RecipientResolver;
  ingest: Ingest;
}

/**
 * Wires the SMTP ingress: registers our raw parser (mailparser + mailauth) with ingest, and builds
 * the listener whose RCPT checks go through `resolve` and whose DATA goes to `ingest.acceptRaw`.
 * `start` in app.ts calls `listen`, `stop` calls `close`, main.ts calls `reloadTls` on SIGHUP.
 */
export function installSmtp(core: Core, deps: SmtpDeps, options: { limits?: Partial<SmtpLimits> } = {}) {
  const { config, logger, clock } = core;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const authenticate = createAuthenticator({ hostname: config.hostname, dnsServers: config.dnsServers, logger });
  const parser = createRawParser({ hostname: config.hostname, authenticate, logger });
  deps.ingest.setRawParser(parser);
  const quota: QuotaCheck = (ids, incoming) => deps.ingest.overQuota(ids, Math.max(1, incoming));
  const checkRecipient = createRecipientCheck({ resolve: deps.resolve, quota, maxRecipients: limits.maxRecipients });
  const listener = createSmtpListener({ config, logger, clock, checkRecipient, accept: (d) => deps.ingest.acceptRaw(d), overQuota: quota, limits });

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
    /** Reloads the STARTTLS certificate (SIGHUP). */
    reloadTls: listener.reloadTls,
    /** Open sessions and messages in flight. */
    stats: listener.stats,
    /** The parser registered with ingest (also used by tests of the corpus). */
    parser,
  };
}
/** The SMTP capability as app.ts holds it. */
export type Smtp = ReturnType<typeof installSmtp>;
