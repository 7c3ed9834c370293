import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import pg from 'pg';
import { tempDir } from '../helpers/app.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';

/** A minimal HTTP client for a server child process. */
function client(server: ServerProcess, key: string) {
  const base = `http://127.0.0.1:${server.httpPort}/api`;
  return {
    async req(method: string, path: string, body?: unknown) {
      const res = await fetch(base + path, {
        method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
  };
}

/** Emails stored and queue rows still queued, read from the database the killed node used. */
async function countRows(url: string | null, dataDir: string): Promise<{ stored: number; queued: number }> {
  const query = { stored: 'SELECT count(*) AS n FROM emails', queued: "SELECT count(*) AS n FROM inbound WHERE status = 'queued'" };
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const n = async (text: string) => Number((await client.query<{ n: string }>(text)).rows[0]!.n);
      return { stored: await n(query.stored), queued: await n(query.queued) };
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(dataDir, 'mailstead.db'), { readonly: true });
  try {
    const n = (text: string) => (db.prepare(text).get() as { n: number }).n;
    return { stored: n(query.stored), queued: n(query.queued) };
  } finally {
    db.close();
  }
}

async function poll<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('SIGKILL right after a burst of accepted inbound posts: after a restart every accepted message is stored exactly once', async (t) => {
  const dataDir = tempDir(t, 'mailstead-crash-');
  // In the PostgreSQL lane the node's database is a throw-away PostgreSQL one (the node is killed, not the database).
  const url = onPostgres ? await freshPostgresDatabase(t) : null;
  const database: Record<string, string> = url ? { MAILSTEAD_DATABASE_URL: url } : {};
  let server = await startServerProcess(dataDir, database);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  t.is((await runCli(dataDir, ['tenant', 'create', 'crashco', '--plan', 'active'], database)).code, 0);
  const key = (await runCli(dataDir, ['key', 'create', '--tenant', 'crashco', '--perms', 'read,write,inbound'], database)).stdout.trim();
  let api = client(server, key);
  const dom = await api.req('POST', '/v1/create/domain', { Domain: 'crash.example' });
  t.is(dom.status, 200);
  await poll('domain task', async () => { const r = await api.req('GET', `/v1/get/domain?task_id=${dom.body.task_id}`); return r.body.status === 'completed' ? r : undefined; });
  const mb = await api.req('POST', '/v1/create/mailbox/single', { Email_fullname: 'Crash Box', single_bulk: 'single', Domain: 'crash.example', Params: { email_id: 'box@crash.example', password: 0 } });
  t.is(mb.status, 200);
  await poll('mailbox task', async () => { const r = await api.req('GET', `/v1/get/mailbox/single?task_id=${mb.body.task_id}`); return r.body.status === 'completed' ? r : undefined; });

  // A burst from 24 concurrent senders, killed while posts are still in flight: the 200s are the
  // accepted set; posts without an answer may or may not have been committed.
  const accepted: string[] = [];
  const attempted = new Set<string>();
  const total = 1200;
  const killAt = 500;
  let next = 0;
  let killed = false;
  const body = 'x'.repeat(2000);
  await Promise.all(Array.from({ length: 24 }, async () => {
    while (next < total && !killed) {
      const n = next++;
      const id = `crash-${n}`;
      attempted.add(id);
      try {
        const r = await api.req('POST', '/v1/mail/inbound', {
          message_id: `<${id}@burst.example>`, from_email: 'a@burst.example', to_email: 'box@crash.example', subject: id,
          received_at: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(), body_text: body,
          attachments: n % 10 === 0 ? [{ filename: `${id}.txt`, content_type: 'text/plain', content: Buffer.from(id).toString('base64') }] : undefined,
        });
        if (r.status === 200 && !killed) accepted.push(id);
      } catch {
        // The connection died with the process.
      }
      if (accepted.length >= killAt && !killed) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    }
  }));
  t.is(await server.exited, 'SIGKILL');
  t.true(accepted.length >= killAt);
  // At the moment of the kill, every committed message was either stored or still queued, never both.
  const { stored, queued } = await countRows(url, dataDir);
  t.true(stored + queued >= accepted.length);
  t.log(`at the kill: ${accepted.length} accepted, ${stored} stored, ${queued} still queued`);

  server = await startServerProcess(dataDir, database);
  api = client(server, key);
  const subjects = await poll('all accepted mail stored', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const r = await api.req('GET', `/v1/emails?per_page=100${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.body.data.map((e: any) => e.subject));
      cursor = r.body.meta.next_cursor;
      if (!cursor) break;
    }
    return seen.length >= stored + queued ? seen : undefined;
  }, 60_000);
  t.is(new Set(subjects).size, subjects.length, 'no message twice');
  t.is(subjects.length, stored + queued, 'every committed message, once');
  const have = new Set(subjects);
  t.deepEqual(accepted.filter((id) => !have.has(id)), [], 'every accepted message is there');
  t.true(subjects.every((s) => attempted.has(s)));
  // Attachments survived with their bytes.
  const withAtt = await api.req('GET', `/v1/emails?q=${encodeURIComponent('"crash-10"')}`);
  const email = (await api.req('GET', `/v1/emails/${withAtt.body.data.find((e: any) => e.subject === 'crash-10').id}`)).body.data;
  t.true(accepted.includes('crash-10'));
  const link = await api.req('GET', `/v1/emails/${email.id}/attachments/${email.attachments[0].id}`);
  const file = await fetch(`http://127.0.0.1:${server.httpPort}${new URL(link.body.data.url).pathname}`);
  t.is(await file.text(), 'crash-10');
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);
});
