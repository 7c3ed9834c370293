import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { tempDir } from '../helpers/app.js';
import { certificate } from '../helpers/smtp.js';

/** Operator PEM files for `commonName` in a temporary directory, and the env that points at them. */
export async function pemFiles(t: ExecutionContext, commonName: string) {
  const dir = tempDir(t);
  const pems = await certificate(commonName);
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, pems.cert);
  writeFileSync(keyFile, pems.key);
  return { fingerprint: new X509Certificate(pems.cert).fingerprint256, env: { MAILSTEAD_TLS_CERT: certFile, MAILSTEAD_TLS_KEY: keyFile } };
}
