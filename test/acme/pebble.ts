import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { generate } from 'selfsigned';
import { tempDir } from '../helpers/app.js';
import { fixedPort } from '../helpers/ports.js';
import { poll } from '../helpers/poll.js';

let servingPair: Promise<{ cert: string; key: string }> | null = null;

/**
 * The certificate Pebble's HTTPS API serves (the Debian package ships none): self-signed for
 * 127.0.0.1, and the CA the app is told to trust for the directory. One per test process, since
 * acme-client keeps a single HTTPS agent for the whole process.
 */
function pebbleServingPair(): Promise<{ cert: string; key: string }> {
  servingPair ??= generate([{ name: 'commonName', value: 'pebble test api' }], {
    keySize: 2048, algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] }],
  }).then((p) => ({ cert: p.cert, key: p.private }));
  return servingPair;
}

/** GET over HTTPS trusting only `ca`; resolves with status and body. */
function httpsGet(url: string, ca: string, timeoutMs = 5_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { ca, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

export interface Pebble {
  directoryUrl: string;
  /** PEM the ACME client must trust for the directory. */
  ca: string;
  /** PEM of the intermediate that signs the certificates (management API). */
  intermediate(): Promise<string>;
  /** What Pebble printed so far (for assertion messages). */
  output(): string;
}

/**
 * Starts Pebble (Let's Encrypt's test CA) on 127.0.0.1 with its VA validating HTTP-01 on
 * `httpPort` and resolving names through `dnsServer`; stopped after the test.
 */
export async function startPebble(t: ExecutionContext, opts: { httpPort: number; dnsServer: string }): Promise<Pebble> {
  const dir = tempDir(t, 'mailstead-pebble-');
  const serving = await pebbleServingPair();
  writeFileSync(join(dir, 'cert.pem'), serving.cert);
  writeFileSync(join(dir, 'key.pem'), serving.key);
  const apiPort = await fixedPort();
  const managementPort = await fixedPort();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${apiPort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      httpPort: opts.httpPort,
      tlsPort: await fixedPort(),
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
    },
  }));
  const child = spawn('pebble', ['-config', join(dir, 'config.json'), '-dnsserver', opts.dnsServer], {
    // No sleeping VA and no rejected nonces: fast and deterministic; no reused authorizations, so
    // every order is validated against the server for real.
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let spawnError: Error | null = null;
  // No binary: say how to get it rather than crash the test process.
  child.on('error', (err) => { spawnError = err; });
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = once(child, 'exit');
  t.teardown(async () => {
    if (!spawnError && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });

  const directoryUrl = `https://127.0.0.1:${apiPort}/dir`;
  await poll(() => `pebble ready: ${output}`, async () => {
    if (spawnError) throw new Error(`pebble could not be started (Debian: apt-get install pebble): ${(spawnError as Error).message}`);
    if (child.exitCode !== null) throw new Error(`pebble exited with ${child.exitCode}: ${output}`);
    return httpsGet(directoryUrl, serving.cert).then((r) => r.status === 200, () => false);
  }, { timeoutMs: 20_000, everyMs: 100 });
  return {
    directoryUrl,
    ca: serving.cert,
    async intermediate() {
      const r = await httpsGet(`https://127.0.0.1:${managementPort}/intermediates/0`, serving.cert);
      if (r.status !== 200) throw new Error(`pebble intermediate: ${r.status}`);
      return r.body;
    },
    output: () => output,
  };
}
