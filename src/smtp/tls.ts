import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Config } from '../config.js';

/** The PEM key and certificate STARTTLS offers. */
export interface TlsFiles {
  key: Buffer;
  cert: Buffer;
}

/**
 * Reads MAILSTEAD_TLS_KEY / MAILSTEAD_TLS_CERT when both are configured, and proves they make a
 * usable TLS context (a mismatched pair throws here, not in the middle of a client's handshake).
 * Null when TLS is not configured.
 */
export function readTlsFiles(config: Pick<Config, 'tlsCert' | 'tlsKey'>): TlsFiles | null {
  if (!config.tlsCert || !config.tlsKey) return null;
  const files = { key: readFileSync(config.tlsKey), cert: readFileSync(config.tlsCert) };
  createSecureContext(files);
  return files;
}
