import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import type { Config } from '../config.js';

export const IMPORT_USAGE = `  mailstead import ADDRESS --imap HOST --user NAME [--port N] [--security tls|starttls|none] [--no-tls-verify] [--folders A,B]
      (the source password from MAILSTEAD_IMPORT_PASSWORD or --password-file FILE)
  mailstead import ADDRESS --mbox FILE [--folder NAME]
  mailstead import ADDRESS --maildir-tar FILE
  mailstead export ADDRESS --format mbox|maildir [--folder NAME] --out FILE
      (import and export use the API of the running server: --key KEY or MAILSTEAD_API_KEY, --url URL)`;

/** A mistake on the command line (exit code 2). */
export class CliUsage extends Error {}

const OPTIONS = {
  key: { type: 'string' }, url: { type: 'string' }, imap: { type: 'string' }, user: { type: 'string' }, port: { type: 'string' },
  security: { type: 'string' }, 'no-tls-verify': { type: 'boolean' }, folders: { type: 'string' }, 'password-file': { type: 'string' },
  mbox: { type: 'string' }, 'maildir-tar': { type: 'string' }, folder: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' },
} as const;

/**
 * `mailstead import` and `mailstead export` (DECISIONS.md section 20): clients of the running
 * server's API, so an operator moving many mailboxes scripts the same task, checks and streaming
 * as the API gives (and on PostgreSQL any node takes the work). Import waits for the task and
 * prints its progress to stderr and its results to stdout.
 */
export async function importExportCommand(argv: string[], config: Config, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    throw new CliUsage((err as Error).message);
  }
  const { positionals: [command, address, ...extra], values: v } = parsed;
  if (!address || extra.length) throw new CliUsage(`${command} takes exactly one mailbox ADDRESS`);
  const key = v.key ?? env.MAILSTEAD_API_KEY;
  if (!key) throw new CliUsage('--key KEY (or MAILSTEAD_API_KEY) is required');
  const host = config.httpHost === '0.0.0.0' || config.httpHost === '::' ? '127.0.0.1' : config.httpHost;
  const base = (v.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${config.httpPort}`).replace(/\/+$/, '') + '/api/v1';
  const headers = { authorization: `Bearer ${key}` };
  const box = encodeURIComponent(address);

  if (command === 'export') {
    if (v.format !== 'mbox' && v.format !== 'maildir') throw new CliUsage('--format mbox|maildir is required');
    if (!v.out) throw new CliUsage('--out FILE is required');
    const q = new URLSearchParams({ format: v.format, ...(v.folder ? { folder: v.folder } : {}) });
    const res = await request(`${base}/mailboxes/${box}/export?${q}`, { headers });
    if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${await res.body.text()}`);
    await pipeline(res.body, createWriteStream(v.out));
    return `${v.out}: ${statSync(v.out).size} bytes`;
  }

  let res;
  const sources = [v.imap, v.mbox, v['maildir-tar']].filter((x) => x !== undefined);
  if (sources.length !== 1) throw new CliUsage('import takes one of --imap HOST, --mbox FILE, --maildir-tar FILE');
  if (v.imap) {
    if (!v.user) throw new CliUsage('--user NAME is required with --imap');
    const password = v['password-file'] ? readFileSync(v['password-file'], 'utf8').replace(/\r?\n$/, '') : env.MAILSTEAD_IMPORT_PASSWORD;
    if (!password) throw new CliUsage('the source password: MAILSTEAD_IMPORT_PASSWORD or --password-file FILE');
    const body = {
      source: 'imap', host: v.imap, username: v.user, password, ...(v.port ? { port: Number(v.port) } : {}),
      ...(v.security ? { security: v.security } : {}), ...(v['no-tls-verify'] ? { tls_verify: false } : {}),
      ...(v.folders ? { folders: v.folders.split(',').map((f) => f.trim()).filter(Boolean) } : {}),
    };
    res = await request(`${base}/mailboxes/${box}/import`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } else {
    const file = (v.mbox ?? v['maildir-tar'])!;
    const size = statSync(file).size;
    const q = v.mbox && v.folder ? `?folder=${encodeURIComponent(v.folder)}` : '';
    res = await request(`${base}/mailboxes/${box}/import${q}`, {
      method: 'POST', body: createReadStream(file),
      headers: { ...headers, 'content-type': v.mbox ? 'application/mbox' : 'application/x-tar', 'content-length': String(size) },
    });
  }
  const started = await res.body.json() as { task_id?: number; reason?: string };
  if (res.statusCode !== 200 || !started.task_id) throw new Error(`import: ${res.statusCode} ${started.reason ?? ''}`.trim());
  let last = '';
  for (;;) {
    const poll = await request(`${base}/get/import?task_id=${started.task_id}`, { headers });
    const task = await poll.body.json() as { status: string; results: { messages_imported: number; messages_skipped: number; messages_total: number; error?: string } };
    if (poll.statusCode !== 200) throw new Error(`import poll: ${poll.statusCode} ${JSON.stringify(task)}`);
    const r = task.results;
    const line = `${r.messages_imported} imported, ${r.messages_skipped} skipped of ${r.messages_total}`;
    if (line !== last) { process.stderr.write(`task ${started.task_id}: ${line}\n`); last = line; }
    if (task.status === 'failed') throw new Error(`import failed: ${r.error ?? 'unknown error'}`);
    if (task.status === 'completed') return JSON.stringify(r);
    await new Promise((done) => setTimeout(done, 1000));
  }
}
