import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import * as acme from 'acme-client';
import type { Logger } from '../logger.js';
import type { CertificatePair } from '../tls/pair.js';
import type { ChallengeResponder } from './challenge.js';

/** One ACME request may not hang an order forever (acme-client sets no timeout of its own). */
const REQUEST_TIMEOUT_MS = 30_000;
acme.axios.defaults.timeout = REQUEST_TIMEOUT_MS;

const extraCas = new Set<string>();

/**
 * Adds a CA that directory URLs may be signed by, on top of Node's roots (a test CA such as
 * Pebble's). acme-client talks through one shared axios instance, so this holds for the process.
 */
export function trustDirectoryCa(ca: string | Buffer): void {
  const pem = ca.toString();
  if (extraCas.has(pem)) return;
  extraCas.add(pem);
  acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, ...extraCas], keepAlive: false });
}

/** How often acme-client repeats a request that got no answer or a 5xx/429, and its base delay. */
export function setRequestRetries(attempts: number, delaySeconds: number): void {
  // acmeSettings is acme-client's own addition to the axios defaults, absent from its types.
  const settings = (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number; retryDefaultDelay: number } }).acmeSettings;
  settings.retryMaxAttempts = attempts;
  settings.retryDefaultDelay = delaySeconds;
}

/**
 * acme-client 5.4.0 loses the cause when a request gets no answer even after its retries (its
 * interceptor then reads `.config` of an undefined response and throws this TypeError), so the log
 * would say nothing useful: name the likely cause instead.
 */
function explain(err: unknown, directoryUrl: string): Error {
  if (err instanceof TypeError && /reading 'config'/.test(err.message)) {
    return new Error(`no answer from the ACME directory ${directoryUrl} (connection refused, reset or unresolvable)`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

export interface OrderRequest {
  directoryUrl: string;
  email: string;
  hostname: string;
  accountKey: Buffer;
  challenges: ChallengeResponder;
  logger: Logger;
  /** First wait between polls of a pending authorization or order (acme-client's default 5 s). */
  pollMinMs?: number;
}

/**
 * Orders one certificate naming `hostname` (RFC 8555 section 7.4) over HTTP-01 and returns it with
 * its new key and the full chain as the CA sent it. A fresh RSA-2048 key per certificate: the key
 * every mail client accepts, and a renewal never reuses a key that may have leaked.
 */
export async function orderCertificate(req: OrderRequest): Promise<CertificatePair> {
  const client = new acme.Client({
    directoryUrl: req.directoryUrl,
    accountKey: req.accountKey,
    ...(req.pollMinMs !== undefined ? { backoffMin: req.pollMinMs, backoffMax: Math.max(req.pollMinMs * 8, req.pollMinMs) } : {}),
  });
  const [key, csr] = await acme.crypto.createCsr({ commonName: req.hostname, altNames: [req.hostname], keySize: 2048 });
  const chain = await client.auto({
    csr,
    email: req.email,
    termsOfServiceAgreed: true,
    challengePriority: ['http-01'],
    // acme-client would first fetch http://<hostname>/.well-known/... itself; behind NAT without
    // hairpinning that fails although the CA can reach us, so the CA's own check is the one that counts.
    skipChallengeVerification: true,
    challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
      if (challenge.type !== 'http-01') throw new Error(`challenge type ${challenge.type} is not offered by this server`);
      req.challenges.set(challenge.token, keyAuthorization);
      req.logger.debug({ hostname: req.hostname }, 'acme http-01 challenge published');
    },
    challengeRemoveFn: async (_authz, challenge) => {
      req.challenges.remove(challenge.token);
    },
  }).catch((err: unknown) => { throw explain(err, req.directoryUrl); });
  return { key: Buffer.from(key), cert: Buffer.from(chain) };
}
