import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import test from 'ava';
import { request } from 'undici';
import { startTestApp } from '../helpers/app.js';

const LIMIT = 1024 * 1024; // the default JSON body limit
const CHUNK = Buffer.alloc(16 * 1024, 0x20);

/**
 * Sends a request of `total` body bytes (Content-Length, or chunked when `chunked`) a chunk at a
 * time, yielding to the event loop between chunks, while reading whatever the server answers.
 * Resolves once the server has closed the connection, with what was read, how much of the body
 * went out, and any socket error (a reset is ECONNRESET).
 */
function sendSlowly(port: number, head: string, total: number, chunked: boolean) {
  return new Promise<{ answer: string; sent: number; error: string | null }>((resolve) => {
    // allowHalfOpen: the client goes on sending after the server's FIN, as a client busy writing does.
    const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    let error: string | null = null;
    let closed = false;
    socket.on('data', (d) => { answer += d.toString('latin1'); });
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message; });
    socket.on('close', () => { closed = true; resolve({ answer, sent, error }); });
    socket.on('connect', async () => {
      socket.write(head + (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${total}\r\n`) + '\r\n');
      while (sent < total && !closed && socket.writable) {
        const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]) : CHUNK);
        sent += CHUNK.length;
        if (!ok) await new Promise((r) => socket.once('drain', r));
        else await new Promise((r) => setImmediate(r));
      }
      if (chunked && socket.writable) socket.write('0\r\n\r\n');
      if (socket.writable) socket.end();
    });
  });
}

test('a client still sending an oversized body reads the 413, with Content-Length or chunked, and is not reset', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const head = `POST /api/v1/create/domain HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`;
  for (const chunked of [false, true]) {
    const total = 2 * LIMIT;
    const r = await sendSlowly(app.httpPort, head, total, chunked);
    t.is(r.error, null, `no reset (${chunked ? 'chunked' : 'Content-Length'})`);
    t.regex(r.answer, /^HTTP\/1\.1 413 /);
    t.regex(r.answer, /\r\nConnection: close\r\n/i);
    t.true(r.answer.endsWith(JSON.stringify({ status: 'error', reason: `Request body is larger than ${LIMIT} bytes` })));
    t.is(r.sent, total, 'the whole body went out: the server read and discarded the rest');
  }
  // The server is fine afterwards.
  t.is((await app.get('/health')).status, 200);
});

test('undici sending an oversized body gets the 413, from a buffer and from a stream', async (t) => {
  const app = await startTestApp(t);
  const key = await app.keyFor();
  const url = `${app.base}/v1/create/domain`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  for (let i = 0; i < 5; i++) {
    const fromBuffer = await request(url, { method: 'POST', headers, body: Buffer.alloc(3 * LIMIT, 0x20) });
    t.is(fromBuffer.statusCode, 413);
    t.deepEqual(await fromBuffer.body.json(), { status: 'error', reason: `Request body is larger than ${LIMIT} bytes` });
  }
  let pushed = 0;
  const stream = new Readable({
    read() {
      pushed += CHUNK.length;
      setImmediate(() => this.push(pushed > 3 * LIMIT ? null : CHUNK));
    },
  });
  const fromStream = await request(url, { method: 'POST', headers, body: stream });
  t.is(fromStream.statusCode, 413);
  await fromStream.body.dump();
});
