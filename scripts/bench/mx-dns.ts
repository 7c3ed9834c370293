import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ROOT } from './email-bench-server.js';

/** The DNS server, in its own thread so a busy main thread (senders and sink) does not slow answers. */
const DNS_SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const dns2 = require(workerData.dns2);
const { Packet } = dns2;
const server = dns2.createServer({ udp: true, handle(request, send) {
  const response = Packet.createResponseFromRequest(request);
  const [q] = request.questions;
  const name = String(q.name).toLowerCase().replace(/\\.$/, '');
  const base = { name: q.name, type: q.type, class: Packet.CLASS.IN, ttl: 300 };
  if (name === workerData.domain && q.type === Packet.TYPE.MX) response.answers.push({ ...base, exchange: 'mx.' + workerData.domain, priority: 10 });
  else if (name === 'mx.' + workerData.domain && q.type === Packet.TYPE.A) response.answers.push({ ...base, address: '127.0.0.1' });
  else if (name !== 'mx.' + workerData.domain && name !== workerData.domain) response.header.rcode = 3;
  send(response);
} });
server.listen({ udp: { port: 0, address: '127.0.0.1' } }).then((a) => parentPort.postMessage(a.udp.port));
`;

/** Answers MX <domain> -> mx.<domain> -> 127.0.0.1 (NXDOMAIN for other names), for the outbound benchmarks' remote MX. */
export async function startMxDns(domain: string): Promise<{ server: string; stop(): Promise<number> }> {
  const worker = new Worker(DNS_SERVER, { eval: true, workerData: { dns2: join(ROOT, 'node_modules', 'dns2'), domain } });
  const port = await new Promise<number>((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  return { server: `127.0.0.1:${port}`, stop: () => worker.terminate() };
}
