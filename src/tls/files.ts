import { readFile } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { CertificatePair } from './pair.js';

/** Whether the operator configured MAILSTEAD_TLS_CERT / MAILSTEAD_TLS_KEY (config.ts insists on both or neither). */
export function filesConfigured(config: Pick<Config, 'tlsCert' | 'tlsKey'>): boolean {
  return !!config.tlsCert && !!config.tlsKey;
}

/** Reads the operator's PEM files as they are now (validation is the source's job). */
export async function readPairFiles(config: Pick<Config, 'tlsCert' | 'tlsKey'>): Promise<CertificatePair> {
  if (!config.tlsCert || !config.tlsKey) throw new Error('MAILSTEAD_TLS_CERT and MAILSTEAD_TLS_KEY are not set');
  const [key, cert] = await Promise.all([readFile(config.tlsKey), readFile(config.tlsCert)]);
  return { key, cert };
}
