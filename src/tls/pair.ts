import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';

/** A PEM private key and its certificate chain (leaf first). */
export interface CertificatePair {
  key: Buffer;
  cert: Buffer;
}

/** What the logs and tests say about a pair: never the key. */
export interface PairSummary {
  subject: string;
  subjectAltName: string | undefined;
  validTo: Date;
  /** SHA-256 fingerprint of the leaf, colon-separated hex. */
  fingerprint256: string;
}

/** Thrown when a pair cannot serve TLS: unparseable PEM, or a key that does not match the leaf. */
export class CertificatePairError extends Error {}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** The leaf (first) certificate of a PEM chain. */
export function leafCertificate(chain: Buffer): X509Certificate {
  const first = PEM_CERTIFICATE.exec(chain.toString('latin1'));
  if (!first) throw new CertificatePairError('no PEM certificate found');
  try {
    return new X509Certificate(first[0]);
  } catch (err) {
    throw new CertificatePairError(`certificate cannot be parsed: ${(err as Error).message}`);
  }
}

/**
 * Proves a pair usable before it replaces anything: the leaf parses, the key parses and belongs to
 * the leaf, and OpenSSL builds a context from both (so the failure surfaces here, at install time,
 * and not in the middle of a client's handshake). Returns the ready context.
 */
export function validatePair(pair: CertificatePair): { context: SecureContext; leaf: X509Certificate } {
  const leaf = leafCertificate(pair.cert);
  let key;
  try {
    key = createPrivateKey(pair.key);
  } catch (err) {
    throw new CertificatePairError(`private key cannot be parsed: ${(err as Error).message}`);
  }
  if (!leaf.checkPrivateKey(key)) throw new CertificatePairError('private key does not match the certificate');
  try {
    return { context: createSecureContext({ key: pair.key, cert: pair.cert }), leaf };
  } catch (err) {
    throw new CertificatePairError(`TLS context refused the pair: ${(err as Error).message}`);
  }
}

/** The loggable facts of a certificate. */
export function summarize(leaf: X509Certificate): PairSummary {
  return { subject: leaf.subject, subjectAltName: leaf.subjectAltName, validTo: new Date(leaf.validTo), fingerprint256: leaf.fingerprint256 };
}
