import { createPrivateKey, type KeyObject } from 'node:crypto';

/**
 * Each domain's DKIM private key parsed once. Parsing a PEM key (OpenSSL's decoders) costs more
 * than the RSA-2048 signature made with it, so signers keep the KeyObject. Keys are looked up per
 * message by the caller; a PEM that changed (a rotation) is parsed again.
 */
export function createKeyCache() {
  const keys = new Map<string, { pem: string; key: KeyObject }>();
  return function keyFor(domain: string, pem: string): KeyObject {
    const known = keys.get(domain);
    if (known && known.pem === pem) return known.key;
    const key = createPrivateKey({ key: pem, format: 'pem' });
    keys.set(domain, { pem, key });
    return key;
  };
}
export type KeyCache = ReturnType<typeof createKeyCache>;
