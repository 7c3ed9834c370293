import type { ExecutionContext } from 'ava';
import { systemClock } from '../../src/clock.js';
import { openPostgresDatabase, type PostgresDatabase } from '../../src/db/postgres.js';
import { createTenantService } from '../../src/tenants/service.js';
import { createTenantStore } from '../../src/tenants/store.js';
import { tempDir, type Reply } from './app.js';
import { freshPostgresDatabase } from './pg.js';
import { startServerProcess, type ServerProcess } from './process.js';
import { poll } from './poll.js';

/**
 * Several nodes on ONE PostgreSQL database (DECISIONS.md section 17): each a server process of its
 * own (`src/main.ts`, as `npm start` runs it, so one can be SIGKILLed mid-work) with a data dir of
 * its own, all on one throw-away database of the test cluster (pg.ts). The test process also opens
 * that database itself (`admin`), to provision tenants and keys and to look at or plant rows.
 */

/** How long a node may take to stop after SIGTERM before it is killed. */
const STOP_MS = 15_000;

/** One running node and a small HTTP client for it. */
export interface TestNode {
  name: string;
  dataDir: string;
  process: ServerProcess;
  httpPort: number;
  request(method: string, path: string, o?: { key?: string; body?: unknown }): Promise<Reply>;
  get(path: string, key?: string): Promise<Reply>;
  post(path: string, key: string | undefined, body?: unknown): Promise<Reply>;
  /** Polls a task endpoint on this node until the task is no longer queued or running. */
  pollTask(path: string, key: string, taskId: number, timeoutMs?: number): Promise<Reply>;
  /** Ends the process at once (no shutdown: its connections, and PostgreSQL's locks on them, just go). */
  kill(): Promise<void>;
  /** Everything the node printed (its JSON log lines at info level). */
  output(): string;
  /** A port the node logged at start (`imap_port`, `submissions_port`, ...). */
  port(field: string): number;
}

/** The shared database, as the test sees it. */
export interface Cluster {
  url: string;
  /** The test's own connection to the shared database (closed after the test). */
  admin: PostgresDatabase;
  /** A tenant with an active plan and a key with every permission, made in the shared database. */
  tenantKey(name?: string): Promise<string>;
  /** Starts one more node on the shared database; `env` overrides its environment. */
  startNode(name: string, env?: Record<string, string>): Promise<TestNode>;
}

let tenantSeq = 0;

/** A fresh database for this test, with the means to start nodes on it. */
export async function sharedDatabase(t: ExecutionContext): Promise<Cluster> {
  const url = await freshPostgresDatabase(t);
  const admin = await openPostgresDatabase(url, { max: 2 });
  t.teardown(() => admin.close());
  const tenants = createTenantService({ db: admin.db, store: createTenantStore(), clock: systemClock, cooldownSeconds: 0 });

  return {
    url,
    admin,
    async tenantKey(name = `nodes${process.pid}x${++tenantSeq}`) {
      await tenants.createTenant(name, { plan: true });
      return tenants.createKey(name, 'read,write,inbound,webhook');
    },
    startNode: (name, env = {}) => startNode(t, url, name, env),
  };
}

/** Starts `count` nodes on one fresh database (named a, b, ...), all at once. */
export async function startNodes(t: ExecutionContext, count = 2, env: Record<string, string> = {}): Promise<{ cluster: Cluster; nodes: TestNode[] }> {
  const cluster = await sharedDatabase(t);
  const names = 'abcdefgh'.slice(0, count).split('');
  const nodes = await Promise.all(names.map((n) => cluster.startNode(n, env)));
  return { cluster, nodes };
}

async function startNode(t: ExecutionContext, url: string, name: string, env: Record<string, string>): Promise<TestNode> {
  const dataDir = tempDir(t, `mailstead-node-${name}-`);
  const proc = await startServerProcess(dataDir, { MAILSTEAD_DATABASE_URL: url, ...env }, 60_000);
  let ended = false;
  void proc.exited.then(() => { ended = true; });
  // Stopped before its data dir goes and before the database is dropped (teardowns run last first).
  t.teardown(async () => {
    if (ended) return;
    proc.child.kill('SIGTERM');
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), STOP_MS);
    await proc.exited;
    clearTimeout(timer);
  });
  const base = `http://127.0.0.1:${proc.httpPort}/api`;

  async function request(method: string, path: string, o: { key?: string; body?: unknown } = {}): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined;
    if (o.body !== undefined) { body = JSON.stringify(o.body); headers['content-type'] = 'application/json'; }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  const node: TestNode = {
    name, dataDir, process: proc, httpPort: proc.httpPort,
    request,
    get: (path, key) => request('GET', path, { key }),
    post: (path, key, body) => request('POST', path, { key, body }),
    async pollTask(path, key, taskId, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await node.get(`${path}?task_id=${taskId}`, key);
        if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r;
        if (Date.now() > deadline) throw new Error(`task ${taskId} still ${r.body.status} after ${timeoutMs} ms on node ${name}`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    async kill() {
      if (!ended) proc.child.kill('SIGKILL');
      await proc.exited;
    },
    output: () => proc.output(),
    port(field) {
      for (const line of proc.output().split('\n')) {
        if (!line.startsWith('{') || !line.includes(`"${field}"`)) continue;
        try {
          const port = JSON.parse(line)[field];
          if (typeof port === 'number') return port;
        } catch { /* a partial line */ }
      }
      throw new Error(`node ${name} logged no ${field}`);
    },
  };
  return node;
}

/** Polls `check` until it returns a value other than undefined; bounded in time. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  return poll(what, check, { timeoutMs, everyMs, done: (v) => v !== undefined }) as Promise<T>;
}

/** A domain and its mailbox `box@<domain>` (password `password-123`) made through `node`, each task checked completed; the address. */
export async function nodeMailbox(t: ExecutionContext, node: TestNode, key: string, domain: string, fullname: string): Promise<string> {
  const d = await node.post('/v1/create/domain', key, { Domain: domain });
  t.is((await node.pollTask('/v1/get/domain', key, d.body.task_id)).body.status, 'completed');
  const address = `box@${domain}`;
  const m = await node.post('/v1/create/mailbox/single', key, { Email_fullname: fullname, single_bulk: 'single', Domain: domain, Params: { email_id: address, password: 'password-123' } });
  t.is((await node.pollTask('/v1/get/mailbox/single', key, m.body.task_id)).body.status, 'completed');
  return address;
}
