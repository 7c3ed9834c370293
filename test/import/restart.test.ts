import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { startDovecot } from '../helpers/dovecot.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/pg.js';
import { processApi, runCli, startServerProcess } from '../helpers/process.js';
import { poll } from '../helpers/poll.js';

const PER_FOLDER = 800;
const FOLDERS = ['INBOX', 'Archive'];

/** Polls `probe` until it answers a value (a probe that throws has not yet), within a bounded time. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  return poll(what, probe, { timeoutMs, everyMs: 20, ignoreErrors: true, done: (v) => v !== undefined }) as Promise<T>;
}

test('a SIGKILL in the middle of an IMAP import, then a restart: the task resumes and the mailbox holds every message exactly once', async (t) => {
  t.timeout(300_000);
  const dovecot = await startDovecot(t, { dave: 'pw' });
  for (const folder of FOLDERS) {
    dovecot.seed('dave', folder, Array.from({ length: PER_FOLDER }, (_, i) => ({
      raw: [`Message-ID: <${folder}.${i}@old.example>`, `Subject: ${folder} ${i}`, 'From: a@old.example', '', `body ${i} `.repeat(20), ''].join('\r\n'),
      date: new Date(Date.UTC(2021, 0, 1) + i * 60_000), info: i % 2 ? 'S' : '',
    })));
  }
  const total = PER_FOLDER * FOLDERS.length;
  const dataDir = tempDir(t, 'mailstead-import-crash-');
  const url = onPostgres ? await freshPostgresDatabase(t) : null;
  const env: Record<string, string> = { MAILSTEAD_IMPORT_ALLOW_PRIVATE: 'true', ...(url ? { MAILSTEAD_DATABASE_URL: url } : {}) };
  let server = await startServerProcess(dataDir, env);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  t.is((await runCli(dataDir, ['tenant', 'create', 'moveco', '--plan', 'active'], env)).code, 0);
  const key = (await runCli(dataDir, ['key', 'create', '--tenant', 'moveco', '--perms', 'read,write'], env)).stdout.trim();
  let api = processApi(server.httpPort, key, { deadlineMs: 60_000 });
  const dom = await api.call('POST', '/v1/create/domain', { Domain: 'move.example' });
  t.is((await api.poll('/v1/get/domain', dom.body.task_id)).body.status, 'completed');
  const mb = await api.call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Move Box', single_bulk: 'single', Domain: 'move.example', Params: { email_id: 'box@move.example', password: 0 } });
  t.is((await api.poll('/v1/get/mailbox/single', mb.body.task_id)).body.status, 'completed');

  const started = await api.call('POST', '/v1/mailboxes/box@move.example/import', { source: 'imap', host: '127.0.0.1', port: dovecot.port, security: 'none', username: 'dave', password: 'pw' });
  t.is(started.status, 200);
  const taskId = started.body.task_id;
  // Killed once some batches are committed and before the end.
  const before = await until('some messages imported', async () => {
    const r = await api.call('GET', `/v1/get/import?task_id=${taskId}`);
    return r.body.results.messages_imported >= 200 ? r.body.results : undefined;
  });
  server.child.kill('SIGKILL');
  t.is(await server.exited, 'SIGKILL');
  t.true(before.messages_imported < total, `killed mid-import (${before.messages_imported} of ${total})`);
  t.log(`killed with ${before.messages_imported} of ${total} imported`);

  server = await startServerProcess(dataDir, env);
  api = processApi(server.httpPort, key, { deadlineMs: 180_000, everyMs: 100 });
  const done = await api.poll('/v1/get/import', taskId);
  t.is(done.body.status, 'completed', JSON.stringify(done.body));
  t.like(done.body.results, { status: 'completed', messages_total: total, messages_imported: total, messages_skipped: 0 });

  // What is stored, counted through the export: every message once.
  for (const folder of FOLDERS) {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/api/v1/mailboxes/box@move.example/export?format=mbox&folder=${folder}`, { headers: { authorization: `Bearer ${key}` } });
    t.is(res.status, 200);
    const text = await res.text();
    const ids = [...text.matchAll(/^Message-ID: <([^>]+)>/gm)].map((m) => m[1]);
    t.is(ids.length, PER_FOLDER, `${folder}: exact count`);
    t.is(new Set(ids).size, PER_FOLDER, `${folder}: no duplicates`);
  }
});
