import type { SecureContext, Server, TlsOptions } from 'node:tls';
import type { Logger } from '../logger.js';
import { summarize, validatePair, type CertificatePair } from './pair.js';

/** Where the pair in force came from (DECISIONS.md section 15, in order of precedence). */
export type CertificateOrigin = 'files' | 'acme' | 'self-signed';

/** What every TLS listener of the process draws its certificate from; see index.ts. */
export interface SwappableCertificate {
  current(): { key: Buffer; cert: Buffer; source: CertificateOrigin };
  secureContext(): SecureContext;
  serverOptions(): TlsOptions;
  attach(server: Server): () => void;
  install(pair: CertificatePair, source: CertificateOrigin): void;
  /** Calls `listener` after every swap (listeners such as smtp-server keep their own default context). */
  onSwap(listener: (pair: { key: Buffer; cert: Buffer; context: SecureContext }) => void): () => void;
}

/**
 * The holder of the pair in force. One SecureContext is built per swap and shared by every
 * handshake; attached tls.Servers get setSecureContext, SNICallback users read it at each handshake.
 */
export function createSwappableCertificate(first: CertificatePair, origin: CertificateOrigin, logger: Logger): SwappableCertificate {
  let state = { ...first, source: origin, context: validatePair(first).context };
  const servers = new Set<Server>();
  const listeners = new Set<(pair: { key: Buffer; cert: Buffer; context: SecureContext }) => void>();

  return {
    current: () => ({ key: state.key, cert: state.cert, source: state.source }),
    secureContext: () => state.context,
    serverOptions: () => ({
      key: state.key,
      cert: state.cert,
      // Called for every handshake that names a server (SNI): hands out whatever is in force then.
      SNICallback: (_servername, callback) => callback(null, state.context),
    }),
    attach(server) {
      servers.add(server);
      // A server built from an older serverOptions() catches up at once.
      server.setSecureContext({ key: state.key, cert: state.cert });
      return () => { servers.delete(server); };
    },
    install(pair, source) {
      const { context, leaf } = validatePair(pair); // throws on a bad pair: the old one stays
      state = { key: pair.key, cert: pair.cert, source, context };
      for (const server of servers) server.setSecureContext({ key: pair.key, cert: pair.cert });
      for (const listener of listeners) {
        try {
          listener({ key: pair.key, cert: pair.cert, context });
        } catch (err) {
          logger.error({ err }, 'a TLS listener refused the new certificate');
        }
      }
      logger.info({ tls_source: source, ...summarize(leaf) }, 'tls certificate installed');
    },
    onSwap(listener) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
  };
}
