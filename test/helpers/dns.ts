import { Worker } from 'node:worker_threads';

let started: Promise<string> | null = null;

/**
 * The server's body, run in its own thread: a test process also runs the servers under test on its
 * main thread, and a busy second there (migrations, hashing, a burst of mail) must not turn a
 * lookup into a timeout.
 */
const SERVER = `
const { createSocket } = require('node:dgram');
const { parentPort } = require('node:worker_threads');
const socket = createSocket('udp4');
socket.on('message', (query, peer) => {
  if (query.length < 12) return;
  // Keep the header and the question; drop any additional records (EDNS) of the query.
  let end = 12;
  while (end < query.length && query[end] !== 0) end += query[end] + 1;
  end += 5;
  if (end > query.length) return;
  const reply = Buffer.from(query.subarray(0, end));
  reply[2] = 0x84 | (query[2] & 0x79); // QR, AA, the query's opcode and RD
  reply[3] = 0x83; // RA, RCODE 3 (NXDOMAIN)
  reply.writeUInt16BE(1, 4);
  reply.writeUInt32BE(0, 6);
  reply.writeUInt16BE(0, 10);
  socket.send(reply, peer.port, peer.address);
});
socket.bind(0, '127.0.0.1', () => parentPort.postMessage(socket.address().port));
`;

/**
 * A real DNS server on 127.0.0.1 that answers every question at once with NXDOMAIN: the world as
 * seen by a box whose domains publish nothing. Test servers use it so that mail authentication and
 * DNS checks get fast, definite answers instead of waiting for timeouts. One per test process.
 */
export function quietDns(): Promise<string> {
  started ??= new Promise((resolve, reject) => {
    const worker = new Worker(SERVER, { eval: true });
    worker.once('error', reject);
    worker.once('message', (port: number) => {
      worker.unref();
      resolve(`127.0.0.1:${port}`);
    });
  });
  return started;
}
