import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { AcmeTestOptions } from '../../src/acme/index.js';
import { createApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { OutboundTesting } from '../../src/outbound/index.js';
import { quietDns } from './dns.js';
import { freshPostgresDatabase, onPostgres } from './pg.js';

/** An HTTP answer with its JSON body parsed (or the text when it is not JSON). */
export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/** The environment every test server starts with; tests override single variables. */
export const TEST_ENV: Record<string, string> = {
  MAILSTEAD_HTTP_HOST: '127.0.0.1',
  MAILSTEAD_HTTP_PORT: '0',
  MAILSTEAD_SMTP_HOST: '127.0.0.1',
  MAILSTEAD_SMTP_PORT: '0',
  MAILSTEAD_IMAP_PORT: '0',
  MAILSTEAD_IMAP_STARTTLS_PORT: '0',
  MAILSTEAD_SUBMISSION_PORT: '0',
  MAILSTEAD_SUBMISSIONS_PORT: '0',
  MAILSTEAD_MANAGESIEVE_PORT: '0',
  MAILSTEAD_HOSTNAME: 'mx.mailstead.test',
  MAILSTEAD_MX_HOSTS: 'mx1.mailstead.test,mx2.mailstead.test',
  MAILSTEAD_LOG_LEVEL: 'silent',
  MAILSTEAD_RATE_LIMIT: '0',
  MAILSTEAD_INBOUND_RATE_LIMIT: '0',
  MAILSTEAD_DNS_SERVERS: '127.0.0.1:1',
};

/** A fresh temporary data directory, removed after the test. */
export function tempDir(t: ExecutionContext, prefix = 'mailstead-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let tenantSeq = 0;
/** The PostgreSQL database standing for each data dir in the PostgreSQL lane. */
const databaseOfDataDir = new Map<string, string>();

/**
 * Boots the real app in this process on port 0 with a temporary data dir, and returns a small
 * client for it. Stopped and cleaned after the test.
 */
export async function startTestApp(t: ExecutionContext, opts: { env?: Record<string, string>; clock?: Clock; dataDir?: string; parserThreads?: number; logger?: Logger; outboundTesting?: OutboundTesting; acme?: AcmeTestOptions } = {}) {
  const dataDir = opts.dataDir ?? tempDir(t);
  // The PostgreSQL lane (MAILSTEAD_TEST_DATABASE=postgres): a database per data dir, so a server
  // restarted on the same data dir finds what the first one stored.
  let database = {};
  if (onPostgres && !opts.env?.MAILSTEAD_DATABASE_URL) {
    let url = databaseOfDataDir.get(dataDir);
    if (!url) databaseOfDataDir.set(dataDir, url = await freshPostgresDatabase(t));
    database = { MAILSTEAD_DATABASE_URL: url };
  }
  const config = loadConfig({ ...TEST_ENV, MAILSTEAD_DNS_SERVERS: await quietDns(), MAILSTEAD_DATA_DIR: dataDir, ...database, ...opts.env });
  const app: App = await createApp({ config, clock: opts.clock, logger: opts.logger ?? createLogger(config.logLevel), parserThreads: opts.parserThreads, outboundTesting: opts.outboundTesting, acme: opts.acme });
  const { httpPort, smtpPort, imapPort, imapStarttlsPort, submissionPort, submissionsPort, managesievePort } = await app.start();
  let stopped = false;
  const stop = async () => {
    if (!stopped) { stopped = true; await app.stop(); }
  };
  t.teardown(stop);
  const base = `http://127.0.0.1:${httpPort}/api`;

  async function request(method: string, path: string, o: { key?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | Buffer | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) { body = JSON.stringify(o.body); headers['content-type'] ??= 'application/json'; }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  const client = {
    app, base, httpPort, smtpPort, imapPort: imapPort ?? 0, imapStarttlsPort: imapStarttlsPort ?? 0, submissionPort: submissionPort ?? 0, submissionsPort: submissionsPort ?? 0, managesievePort: managesievePort ?? 0, dataDir, config, stop,
    request,
    get: (path: string, key?: string) => request('GET', path, { key }),
    post: (path: string, key: string | undefined, body?: unknown) => request('POST', path, { key, body }),
    patch: (path: string, key: string | undefined, body?: unknown) => request('PATCH', path, { key, body }),
    del: (path: string, key?: string) => request('DELETE', path, { key }),

    /** Creates a tenant (unique name unless given) and returns its name. */
    async tenant(o: { name?: string; plan?: boolean; admin?: boolean } = {}) {
      const name = o.name ?? `tenant${process.pid}x${++tenantSeq}`;
      await app.tenants.createTenant(name, { plan: o.plan ?? true, admin: o.admin ?? false });
      return name;
    },

    /** A new key; by default of a new tenant with an active plan and every permission. */
    async keyFor(o: { tenant?: string; perms?: string[]; plan?: boolean; admin?: boolean } = {}) {
      const tenant = o.tenant ?? (await client.tenant({ plan: o.plan, admin: o.admin }));
      return app.tenants.createKey(tenant, (o.perms ?? ['read', 'write', 'inbound', 'webhook']).join(','));
    },

    /** Polls a task endpoint until the task is no longer queued or running (or the poll errors). */
    async pollTask(path: string, key: string, taskId: number, timeoutMs = 30_000): Promise<Reply> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await client.get(`${path}?task_id=${taskId}`, key);
        if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r;
        if (Date.now() > deadline) throw new Error(`task ${taskId} still ${r.body.status} after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 10));
      }
    },

    /** Creates a root domain and waits for its task; returns the hostname. */
    async domain(key: string, hostname: string, params?: Record<string, unknown>) {
      const r = await client.post('/v1/create/domain', key, { Domain: hostname, ...(params ? { Params: params } : {}) });
      if (r.status !== 200) throw new Error(`create domain ${hostname}: ${r.status} ${JSON.stringify(r.body)}`);
      const done = await client.pollTask('/v1/get/domain', key, r.body.task_id);
      if (done.body.status !== 'completed') throw new Error(`domain task: ${JSON.stringify(done.body)}`);
      return hostname;
    },
  };
  return client;
}
export type TestClient = Awaited<ReturnType<typeof startTestApp>>;
