import test from 'ava';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tempDir } from '../helpers/app.js';
import { runCli, startServerProcess } from '../helpers/process.js';
import { poll } from '../helpers/poll.js';

/** Polls `done` every 20 ms until it holds (bounded at 20 s). */
async function until(what: string, done: () => boolean): Promise<void> {
  await poll(what, done, { timeoutMs: 20_000, everyMs: 20 });
}

test('the process prints its ports, serves health, and exits 0 on SIGTERM', async (t) => {
  const dir = tempDir(t);
  const server = await startServerProcess(dir);
  t.teardown(() => { server.child.kill('SIGKILL'); });
  t.true(server.httpPort > 0);
  t.true(server.smtpPort > 0);
  const health = await fetch(`http://127.0.0.1:${server.httpPort}/api/health`);
  t.is(health.status, 200);
  t.deepEqual(await health.json(), { status: 'success' });
  // A request in flight when the signal arrives still gets its answer: send half of it, signal, send the rest.
  await runCli(dir, ['tenant', 'create', 'sig', '--plan', 'active']);
  const key = (await runCli(dir, ['key', 'create', '--tenant', 'sig', '--perms', 'read,write'])).stdout.trim();
  const body = JSON.stringify({ Domain: 'sig.example' });
  const socket = connect(server.httpPort, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (d) => { answer += d; });
  const ended = once(socket, 'end');
  // Expect: 100-continue makes the server say when it has the request's head: then it is in flight.
  socket.write(`POST /api/v1/create/domain HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 5)}`);
  await until('the request head read', () => /^HTTP\/1\.1 100 Continue\r\n\r\n/.test(answer));
  const started = Date.now();
  server.child.kill('SIGTERM');
  await until('the server taking the signal', () => server.output().includes('"msg":"shutting down"'));
  socket.write(body.slice(5)); // no half-close: clients keep their side open until the answer
  await ended;
  answer = answer.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  t.regex(answer, /^HTTP\/1\.1 200 /);
  t.regex(answer, /"task_id":\d+/);
  t.regex(answer, /\r\nConnection: close\r\n/i, 'a draining server lets keep-alive connections go');
  t.is(await server.exited, 0);
  t.true(Date.now() - started < 10_000);
  await t.throwsAsync(fetch(`http://127.0.0.1:${server.httpPort}/api/health`));
  t.regex(server.output(), /"msg":"stopped"/);
  t.notRegex(server.output(), new RegExp(key), 'keys never reach the log');
});

test('SIGINT stops it gracefully too', async (t) => {
  const server = await startServerProcess(tempDir(t));
  t.teardown(() => { server.child.kill('SIGKILL'); });
  server.child.kill('SIGINT');
  t.is(await server.exited, 0);
});

test('a bad configuration value stops the process with a message naming the variable', async (t) => {
  const err = await t.throwsAsync(startServerProcess(tempDir(t), { MAILSTEAD_HTTP_PORT: 'eighty' }));
  t.regex(err!.message, /MAILSTEAD_HTTP_PORT/);
});

test('npm start and the Docker image run the server with the same node flags and environment', (t) => {
  const root = new URL('../../', import.meta.url);
  const words = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  const env = words.filter((w, i) => i < words.indexOf('node') && /^[A-Z_]+=/.test(w));
  const start = words.slice(env.length);
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  t.truthy(cmd, 'the Dockerfile has an exec-form CMD');
  t.deepEqual(JSON.parse(cmd![1]) as string[], start);
  t.is(start.at(-1), 'dist/src/main.js');
  // The runtime stage's ENV sets each variable npm start sets, to the same value.
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
  for (const kv of env) t.regex(runtime, new RegExp(`^\\s*(ENV\\s+)?${kv}(\\s|$)`, 'm'), kv);
});
