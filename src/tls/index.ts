import type { SecureContext, Server, TlsOptions } from 'node:tls';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { filesConfigured, readPairFiles } from './files.js';
import { leafCertificate, summarize } from './pair.js';
import { loadOrCreateSelfSigned } from './self-signed.js';
import { createSwappableCertificate, type CertificateOrigin } from './source.js';

export { CertificatePairError } from './pair.js';
export type { CertificateOrigin } from './source.js';

/**
 * The certificate every TLS face of the process serves (SMTP STARTTLS, IMAPS, IMAP STARTTLS,
 * submission), with DECISIONS.md section 15's sources: the operator's files, else ACME (src/acme,
 * which installs its certificates here), else a self-signed certificate kept in the data directory. Swaps reach new handshakes on
 * every listener without a restart; sessions already under TLS keep theirs.
 */
export interface CertificateSource {
  /** The PEM key and full chain now in force. */
  current(): { key: Buffer; cert: Buffer; source: CertificateOrigin };
  /** A SecureContext of the current pair (cached; replaced on every swap). */
  secureContext(): SecureContext;
  /** TLS options for a listener: key/cert of now plus an SNICallback that always hands out the
   *  current context, so a swap reaches new handshakes on every listener without a restart. */
  serverOptions(): TlsOptions;
  /** Registers a tls.Server (implicit TLS) so swaps call server.setSecureContext; returns an unregister. */
  attach(server: Server): () => void;
  /** Called by the file reload (SIGHUP) and by ACME: validates the pair (throws on a mismatch,
   *  keeping the old one) and swaps it in everywhere. */
  install(pair: { key: Buffer; cert: Buffer }, source: CertificateOrigin): void;
  /** Re-reads MAILSTEAD_TLS_CERT/KEY and installs them (SIGHUP). A no-op without files; rejects, keeping
   *  the old pair, when they cannot be read or do not match. */
  reloadFiles(): Promise<void>;
  /** Calls `listener` after every swap: for listeners that keep their own default context (smtp-server
   *  uses its own for handshakes without SNI). Returns an unregister. */
  onSwap(listener: (pair: { key: Buffer; cert: Buffer; context: SecureContext }) => void): () => void;
  /** Renewal checks of the self-signed certificate finished so far (a test waits for more of them instead of a sleep). */
  renewalChecks(): number;
  /** Stops the daily renewal check of the self-signed certificate. */
  close(): void;
}

const RENEWAL_CHECK_MS = 24 * 3600 * 1000;

/** What the source is built from; `now` and `renewalCheckMs` exist for tests of the renewal. */
export interface CertificateSourceOptions {
  config: Config;
  logger: Logger;
  /** Wall-clock time for validity dates (default Date.now: certificates meet real clients' clocks). */
  now?: () => number;
  /** How often the self-signed certificate's end is looked at (default daily). */
  renewalCheckMs?: number;
}

/** Builds the source; the first pair is in force when the promise resolves. */
export async function createCertificateSource(opts: CertificateSourceOptions): Promise<CertificateSource> {
  const { config, logger } = opts;
  const now = opts.now ?? Date.now;
  let renewal: NodeJS.Timeout | null = null;
  let renewing = false;
  let renewalChecks = 0;
  let swappable;

  if (filesConfigured(config)) {
    const pair = await readPairFiles(config);
    swappable = createSwappableCertificate(pair, 'files', logger);
    logger.info({ tls_source: 'files', ...summarize(leafCertificate(pair.cert)) }, 'tls certificate from MAILSTEAD_TLS_CERT');
  } else {
    // With MAILSTEAD_ACME_EMAIL set, src/acme takes over from here: it installs its stored
    // certificate at once, or lets this self-signed pair serve until its first order completes.
    const selfSigned = await loadOrCreateSelfSigned(config.dataDir, config.hostname, now());
    swappable = createSwappableCertificate(selfSigned.pair, 'self-signed', logger);
    logger.info({ tls_source: 'self-signed', created: selfSigned.created, reason: selfSigned.why, ...summarize(leafCertificate(selfSigned.pair.cert)) }, 'tls certificate self-signed');
    renewal = setInterval(() => void renewSelfSigned(), opts.renewalCheckMs ?? RENEWAL_CHECK_MS);
    renewal.unref();
  }
  const holder = swappable;

  /** Replaces the self-signed pair when it nears its end, unless another source has taken over. */
  async function renewSelfSigned(): Promise<void> {
    // A check still generating (RSA keys take a moment) is not overtaken by the next one.
    if (renewing) return;
    if (holder.current().source !== 'self-signed') { renewalChecks += 1; return; }
    renewing = true;
    try {
      const next = await loadOrCreateSelfSigned(config.dataDir, config.hostname, now());
      if (next.created) holder.install(next.pair, 'self-signed');
    } catch (err) {
      logger.error({ err }, 'self-signed certificate renewal failed; keeping the current one');
    } finally {
      renewing = false;
      renewalChecks += 1;
    }
  }

  return {
    ...holder,
    async reloadFiles() {
      if (!filesConfigured(config)) {
        logger.info('tls reload: MAILSTEAD_TLS_CERT/KEY are not set, nothing to reload');
        return;
      }
      try {
        holder.install(await readPairFiles(config), 'files');
      } catch (err) {
        logger.error({ err }, 'tls reload failed; keeping the previous certificate');
        throw err;
      }
    },
    renewalChecks: () => renewalChecks,
    close() {
      if (renewal) clearInterval(renewal);
      renewal = null;
    },
  };
}
