/**
 * Shared by the benchmarks that drive the app in-process (task timings rather than load): boots
 * the real app on port 0 with a temporary data dir, rate limits off and a local DNS server that
 * answers at once; `stop` shuts it down and removes the data dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { quietDns } from '../../test/helpers/dns.js';

/** The running app and its API base (`http://127.0.0.1:<port>/api`). */
export async function startBenchApp() {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailstead-bench-'));
  const config = loadConfig({
    MAILSTEAD_DATA_DIR: dataDir, MAILSTEAD_HTTP_HOST: '127.0.0.1', MAILSTEAD_HTTP_PORT: '0', MAILSTEAD_SMTP_HOST: '127.0.0.1',
    MAILSTEAD_SMTP_PORT: '0', MAILSTEAD_IMAP_PORT: '0', MAILSTEAD_IMAP_STARTTLS_PORT: '0',
    // Every listener on port 0: two benchmarks side by side must not both want 587 or 4190.
    MAILSTEAD_SUBMISSION_PORT: '0', MAILSTEAD_SUBMISSIONS_PORT: '0', MAILSTEAD_MANAGESIEVE_PORT: '0', MAILSTEAD_LOG_LEVEL: 'silent', MAILSTEAD_RATE_LIMIT: '0', MAILSTEAD_INBOUND_RATE_LIMIT: '0',
    MAILSTEAD_HOSTNAME: 'bench.mailstead.test', MAILSTEAD_DNS_SERVERS: await quietDns(),
  });
  const app = await createApp({ config });
  const { httpPort } = await app.start();
  return {
    app,
    base: `http://127.0.0.1:${httpPort}/api`,
    async stop() {
      await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
