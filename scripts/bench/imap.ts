/**
 * IMAP against Dovecot, in one invocation: the same MESSAGES mixed messages (imap-messages.ts) in
 * one mailbox of each, both over implicit TLS on loopback, both read by the same bare client
 * (imap-client.ts). Ours gets them over SMTP (10 connections, the lean sender); Dovecot's are
 * written into its Maildir (dovecot.ts). After one unmeasured full sync of each (Dovecot builds its
 * index, our caches warm), per server, ROUNDS times alternately:
 *   header_sync  UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE BODYSTRUCTURE)
 *   body_fetch   FETCH 1:1000 BODY.PEEK[]
 *   search_text  UID SEARCH TEXT zephyrine (in 1 message of 1,000)
 * each reported as the median (and all) of the rounds in ms. Then, ours only: the latency from
 * an SMTP 250 to the EXISTS seen by an IDLE client (IDLE_SAMPLES messages one at a time, p50 / p99),
 * and the server's RSS before and after IDLE_CLIENTS clients log in, select INBOX and IDLE, spread
 * over IDLE_CLIENTS / 20 empty mailboxes (ours allows 20 connections per mailbox; for Dovecot as many
 * users, measured as the sum of its processes' PSS). Prints one JSON line.
 *
 * Usage: node --import tsx scripts/bench/imap.ts [--messages=10000] [--rounds=3] [--idle-samples=50]
 *          [--idle-clients=500] [--main=FILE]
 * Needs `dovecot` (Debian: apt-get install dovecot-imapd) and openssl. Bounded: every wait has a deadline.
 */
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { benchEnv, cli, ROOT, serverArgs, startEnv } from './email-bench-server.js';
import { DOVECOT_PASSWORD, DOVECOT_USER, startDovecot, writeMaildir } from './dovecot.js';
import { RawImap } from './imap-client.js';
import { mixedMessage, RARE_WORD } from './imap-messages.js';
import { LeanSmtpClient } from './smtp-client.js';

const { values } = parseArgs({ options: { messages: { type: 'string' }, rounds: { type: 'string' }, 'idle-samples': { type: 'string' }, 'idle-clients': { type: 'string' }, main: { type: 'string' } } });
const MESSAGES = Number(values.messages ?? 10_000);
const ROUNDS = Number(values.rounds ?? 3);
const IDLE_SAMPLES = Number(values['idle-samples'] ?? 50);
const IDLE_CLIENTS = Number(values['idle-clients'] ?? 500);
const DOMAIN = 'bench.test';
const ADDRESS = `inbox@${DOMAIN}`;
const PASSWORD = 'bench-password-2026';

const quote = (s: string) => `"${s.replace(/(["\\])/g, '\\$1')}"`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const round1 = (x: number) => Math.round(x * 10) / 10;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const fetchCount = (text: string) => text.match(/\r\n\* \d+ FETCH /g)?.length ?? (text.startsWith('* ') ? 1 : 0);

async function login(port: number, user: string, pass: string, localAddress?: string): Promise<RawImap> {
  const c = await RawImap.open(port, undefined, localAddress);
  await c.cmd(`LOGIN ${quote(user)} ${quote(pass)}`, 60_000);
  return c;
}

/** The three timed reads on a logged-in, selected connection; returns ms and a check of each. */
async function reads(c: RawImap) {
  let t = performance.now();
  const sync = await c.cmd('UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE BODYSTRUCTURE)');
  const syncMs = performance.now() - t;
  t = performance.now();
  const bodies = await c.cmd(`FETCH 1:${Math.min(1000, MESSAGES)} BODY.PEEK[]`);
  const bodyMs = performance.now() - t;
  t = performance.now();
  const search = await c.cmd(`UID SEARCH TEXT ${RARE_WORD}`);
  const searchMs = performance.now() - t;
  const hits = (/\* SEARCH([ \d]*)/.exec(search)?.[1] ?? '').trim().split(/\s+/).filter(Boolean).length;
  return { syncMs, syncFetches: fetchCount('\r\n' + sync), syncBytes: sync.length, bodyMs, bodyFetches: fetchCount('\r\n' + bodies), bodyBytes: bodies.length, searchMs, hits };
}

/** ROUNDS of reads alternately on the two servers (one unmeasured first), summarised per server. */
async function compareReads(servers: Record<string, { port: number; user: string; pass: string }>) {
  const conns: Record<string, RawImap> = {};
  for (const [name, s] of Object.entries(servers)) {
    conns[name] = await login(s.port, s.user, s.pass);
    await conns[name].cmd('SELECT INBOX');
    await reads(conns[name]);
  }
  const runs: Record<string, Array<Awaited<ReturnType<typeof reads>>>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of Object.keys(servers)) (runs[name] ??= []).push(await reads(conns[name]));
  }
  for (const c of Object.values(conns)) c.close();
  return Object.fromEntries(Object.entries(runs).map(([name, rs]) => [name, {
    header_sync_ms: Math.round(median(rs.map((x) => x.syncMs))), header_sync_runs_ms: rs.map((x) => Math.round(x.syncMs)),
    header_sync_fetches: rs[0].syncFetches, header_sync_mb: round1(rs[0].syncBytes / 1e6),
    body_fetch_1000_ms: Math.round(median(rs.map((x) => x.bodyMs))), body_fetch_runs_ms: rs.map((x) => Math.round(x.bodyMs)), body_fetch_mb: round1(rs[0].bodyBytes / 1e6),
    search_text_ms: round1(median(rs.map((x) => x.searchMs))), search_text_runs_ms: rs.map((x) => round1(x.searchMs)), search_hits: rs[0].hits,
  }]));
}

/**
 * Starts the server (the build as `npm start` runs it, see serverArgs) and resolves once it logged
 * its HTTP, SMTP and IMAPS ports (60 s at most); its later output is drained.
 */
function startImapServer(dataDir: string): Promise<{ child: ChildProcess; base: string; ports: { imap: number; smtp: number }; stop(): Promise<void> }> {
  const child = spawn(process.execPath, serverArgs(values.main), { cwd: ROOT, env: { ...process.env, ...startEnv(), ...benchEnv(dataDir) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out.slice(-500)}`)); }, 60_000);
    const onData = (d: Buffer) => {
      out += d;
      const [http, smtp, imap] = ['http_port', 'smtp_port', 'imap_port'].map((k) => Number(new RegExp(`"${k}":(\\d+)`).exec(out)?.[1] ?? 0));
      if (!http || !smtp || !imap) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({
        child, base: `http://127.0.0.1:${http}/api`, ports: { imap, smtp },
        async stop() { child.kill('SIGTERM'); await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]); child.kill('SIGKILL'); },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited ${code}: ${out.slice(-500)}`)); });
  });
}

/** IDLE_CLIENTS connections logged in, INBOX selected, idling; returns them (to close) and how long that took. */
async function idleClients(port: number, users: string[], pass: string): Promise<{ clients: RawImap[]; seconds: number }> {
  const t = performance.now();
  const clients: RawImap[] = [];
  // 20 at a time: a login is a password hash on the server.
  for (let i = 0; i < IDLE_CLIENTS; i += 20) {
    clients.push(...await Promise.all(Array.from({ length: Math.min(20, IDLE_CLIENTS - i) }, async (_, k) => {
      // Our server takes at most 50 connections per address (src/imap/protocol/server.ts): the clients come
      // from 127.0.0.2, 127.0.0.3, ... 40 to an address, as many machines would.
      const c = await login(port, users[(i + k) % users.length], pass, `127.0.0.${2 + Math.floor((i + k) / 40)}`);
      await c.cmd('SELECT INBOX');
      await c.idle();
      return c;
    })));
  }
  return { clients, seconds: round1((performance.now() - t) / 1000) };
}

const messages = Array.from({ length: MESSAGES }, (_, i) => mixedMessage(i, ADDRESS));
const ourDir = mkdtempSync(join(tmpdir(), 'mailstead-imap-bench-'));
const dovecotDir = mkdtempSync(join(tmpdir(), 'dovecot-imap-bench-'));
const load = [loadavg()[0]];
// Our server allows 20 connections per mailbox (DECISIONS.md section 14): the idle clients spread
// over this many empty mailboxes, and over as many Dovecot users.
const IDLE_USERS = Array.from({ length: Math.ceil(IDLE_CLIENTS / 20) }, (_, k) => `idle${k}`);
const result: Record<string, unknown> = { bench: 'imap', messages: MESSAGES, rounds: ROUNDS, cores: cpus().length };
const server = await startImapServer(ourDir);
const dovecot = await (async () => { writeMaildir(dovecotDir, messages); return startDovecot(dovecotDir, IDLE_USERS); })();
try {
  const pid = server.child.pid!;
  const ports = server.ports;
  await cli(ourDir, ['tenant', 'create', 'bench', '--plan', 'active']);
  const key = await cli(ourDir, ['key', 'create', '--tenant', 'bench', '--perms', 'read,write']);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.base + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return await res.json() as { task_id?: number; status?: string };
  };
  const waitTask = async (path: string, id: number | undefined) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await call('GET', `${path}?task_id=${id}`);
      if (r.status === 'completed') return;
      if (!['queued', 'running'].includes(r.status ?? '') || Date.now() > deadline) throw new Error(`task ${path}: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  await waitTask('/v1/get/domain', (await call('POST', '/v1/create/domain', { Domain: DOMAIN })).task_id);
  for (const address of [ADDRESS, ...IDLE_USERS.map((u) => `${u}@${DOMAIN}`)]) {
    await waitTask('/v1/get/mailbox/single', (await call('POST', '/v1/create/mailbox/single', { Email_fullname: 'Bench Inbox', single_bulk: 'single', Domain: DOMAIN, Params: { email_id: address, password: PASSWORD } })).task_id);
  }

  // Load: 10 SMTP connections, each its share of the messages back to back; then wait until IMAP shows them all.
  let t = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    const smtp = await LeanSmtpClient.open(ports.smtp, 'client.example');
    while (next < MESSAGES) await smtp.send('sender@client.example', ADDRESS, messages[next++]);
    smtp.quit();
  }));
  const status = await login(ports.imap, ADDRESS, PASSWORD);
  const deadline = Date.now() + 600_000;
  for (;;) {
    const n = Number(/MESSAGES (\d+)/.exec(await status.cmd('STATUS INBOX (MESSAGES)'))?.[1] ?? 0);
    if (n >= MESSAGES) break;
    if (Date.now() > deadline) throw new Error(`only ${n} of ${MESSAGES} messages in INBOX after 600 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  status.close();
  result.load_smtp_s = round1((performance.now() - t) / 1000);
  load.push(loadavg()[0]);

  const compared = await compareReads({
    mailstead: { port: ports.imap, user: ADDRESS, pass: PASSWORD },
    dovecot: { port: dovecot.port, user: DOVECOT_USER, pass: DOVECOT_PASSWORD },
  });
  result.mailstead = compared.mailstead;
  result.dovecot = compared.dovecot;
  result.header_sync_ratio = Math.round((compared.mailstead.header_sync_ms / compared.dovecot.header_sync_ms) * 100) / 100;
  load.push(loadavg()[0]);

  // IDLE announce: one idling client; one message at a time, from its 250 to the EXISTS.
  const idler = await login(ports.imap, ADDRESS, PASSWORD);
  await idler.cmd('SELECT INBOX');
  await idler.idle();
  const smtp = await LeanSmtpClient.open(ports.smtp, 'client.example');
  const lat: number[] = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    // A random pause first, so the sends do not fall into step with the session's change polling.
    await new Promise((r) => setTimeout(r, Math.random() * 300));
    await smtp.send('sender@client.example', ADDRESS, mixedMessage(MESSAGES + i, ADDRESS));
    t = performance.now();
    await idler.until(new RegExp(`\\* ${MESSAGES + i + 1} EXISTS`), 30_000);
    lat.push(performance.now() - t);
  }
  smtp.quit();
  idler.close();
  result.idle_announce_ms = { p50: round1(pct(lat, 50)), p99: round1(pct(lat, 99)), max: round1(Math.max(...lat)), samples: lat.length };

  // Idle clients: RSS of our server, PSS of Dovecot's processes, before and after.
  await new Promise((r) => setTimeout(r, 2000));
  const ourBefore = rssMb(pid);
  const ours = await idleClients(ports.imap, IDLE_USERS.map((u) => `${u}@${DOMAIN}`), PASSWORD);
  await new Promise((r) => setTimeout(r, 2000));
  const ourAfter = rssMb(pid);
  for (const c of ours.clients) c.close();
  const dovBefore = dovecot.pssMb();
  const theirs = await idleClients(dovecot.port, IDLE_USERS, DOVECOT_PASSWORD);
  await new Promise((r) => setTimeout(r, 2000));
  const dovAfter = dovecot.pssMb();
  for (const c of theirs.clients) c.close();
  result.idle_clients = {
    clients: IDLE_CLIENTS,
    mailstead: { rss_before_mb: Math.round(ourBefore), rss_after_mb: Math.round(ourAfter), extra_mb: Math.round(ourAfter - ourBefore), setup_s: ours.seconds },
    dovecot: { pss_before_mb: Math.round(dovBefore), pss_after_mb: Math.round(dovAfter), extra_mb: Math.round(dovAfter - dovBefore), setup_s: theirs.seconds },
  };
  load.push(loadavg()[0]);
  result.load_average = load.map(round1);
  // Printed before the clean-up, so a slow stop cannot lose the figures.
  console.log(JSON.stringify(result));
} finally {
  await server.stop();
  await dovecot.stop();
  for (const dir of [ourDir, dovecotDir]) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    } catch (err) {
      process.stderr.write(`could not remove ${dir}: ${String(err)}\n`);
    }
  }
}
