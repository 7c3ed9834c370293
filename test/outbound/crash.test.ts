import { connect } from 'node:net';
import test from 'ava';
import { tempDir } from '../helpers/app.js';
import { runCli, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { sendMail } from '../helpers/smtp.js';
import { waitFor } from '../helpers/webhooks.js';
import { startMxZone } from './mx-zone.js';
import { ALIAS_DOMAIN, REMOTE_DOMAIN, REMOTE_MX, message, outboundEnv, scriptSmtp, startScripted, startSink } from './world.js';

/** A minimal HTTP client for a server child process. */
function client(server: ServerProcess, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/api${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() as any };
  };
}

test('SIGKILL with forwards queued and one mid-DATA: after a restart every one of them is delivered', async (t) => {
  const zone = await startMxZone(t);
  zone.mx(REMOTE_DOMAIN, REMOTE_MX, 10);
  zone.a(REMOTE_MX, '127.0.0.1');
  // First the remote holds every message in DATA without answering (the sender is mid-delivery).
  let hold = true;
  const sink = await startSink(t, { tls: false });
  const held: string[] = [];
  const dataDir = tempDir(t, 'mailstead-outbound-crash-');
  const env = outboundEnv(zone, sink.port, '1');
  // The holding remote: a scripted front that accepts the envelope and never answers the data.
  const front = await startScripted(t, (s) => {
    if (!hold) { const up = connect(sink.port, '127.0.0.1'); s.pipe(up).pipe(s); up.on('error', () => s.destroy()); return; }
    scriptSmtp(s, '220 holding\r\n', (line) => {
      if (/^EHLO/i.test(line)) return '250-holding\r\n250 8BITMIME\r\n';
      if (/^DATA/i.test(line)) return '354 go on\r\n';
      return '250 ok\r\n';
    }, (chunk) => { held.push(chunk.toString('latin1')); });
  });
  env.MAILSTEAD_OUTBOUND_PORT = String(front.port);

  let server = await startServerProcess(dataDir, env);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  t.is((await runCli(dataDir, ['tenant', 'create', 'outco', '--plan', 'active'])).code, 0);
  const key = (await runCli(dataDir, ['key', 'create', '--tenant', 'outco', '--perms', 'read,write,inbound'])).stdout.trim();
  let api = client(server, key);
  const dom = await api('POST', '/v1/create/domain', { Domain: ALIAS_DOMAIN });
  await waitFor(async () => (await api('GET', `/v1/get/domain?task_id=${dom.body.task_id}`)).body.status === 'completed', 'domain', 30_000);
  const alias = await api('POST', '/v1/create/alias', { Domain: ALIAS_DOMAIN, Params: { address: `fwd@${ALIAS_DOMAIN}`, goto: [`dest@${REMOTE_DOMAIN}`] } });
  await waitFor(async () => (await api('GET', `/v1/get/alias?task_id=${alias.body.task_id}`)).body.status === 'completed', 'alias', 30_000);

  t.log('provisioned');
  const subjects = ['crash one', 'crash two', 'crash three'];
  for (const s of subjects) await sendMail(server.smtpPort, { from: `ann@${REMOTE_DOMAIN}`, to: [`fwd@${ALIAS_DOMAIN}`] }, message(`ann@${REMOTE_DOMAIN}`, `fwd@${ALIAS_DOMAIN}`, s));
  await waitFor(async () => (await api('GET', '/v1/outbound')).body.data.length === 3, 'three queued items', 30_000);
  t.log('queued');
  await waitFor(() => held.some((c) => c.includes('Subject: crash')), 'a message held mid-DATA', 30_000);

  t.log('killing');
  server.child.kill('SIGKILL');
  await server.exited;
  hold = false;
  server = await startServerProcess(dataDir, env);
  api = client(server, key);
  t.log('restarted');
  await waitFor(() => sink.messages.length >= 3, 'the three forwards delivered after the restart', 30_000);
  const got = sink.messages.map((m) => /Subject: (crash \w+)/.exec(m.raw.toString('latin1'))?.[1]).sort();
  t.deepEqual(got, [...subjects].sort());
  const items = await waitFor(async () => {
    const r = (await api('GET', '/v1/outbound')).body.data as any[];
    return r.every((i) => i.status === 'sent') ? r : null;
  }, 'every item sent', 30_000);
  t.is(items!.length, 3);
});
