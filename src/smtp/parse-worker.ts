import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { createAuthenticator } from './auth.js';
import { createBlobStore } from '../ingest/blobs.js';
import { createRawParser, storingParser } from './parse.js';
import type { ParseReply, ParseRequest, ParserThreadOptions } from './parse-pool.js';

// One parser thread: mailparser and mailauth run here, off the event loop that serves SMTP and
// HTTP. A message that hangs or exhausts memory takes down this thread, never the server.
const options = workerData as ParserThreadOptions;
const logger = createLogger(options.logLevel);
const parse = storingParser(createRawParser({
  hostname: options.hostname,
  logger,
  authenticate: createAuthenticator({ hostname: options.hostname, dnsServers: options.dnsServers, logger }),
}), createBlobStore(options.dataDir));

parentPort!.on('message', (req: ParseRequest) => {
  const raw = 'path' in req.raw ? { path: req.raw.path } : Buffer.from(req.raw.bytes.buffer, req.raw.bytes.byteOffset, req.raw.bytes.byteLength);
  parse(raw, req.delivery).then(
    (json) => parentPort!.postMessage({ id: req.id, ok: true, json } satisfies ParseReply),
    (err: Error) => parentPort!.postMessage({ id: req.id, ok: false, error: err?.message ?? String(err) } satisfies ParseReply),
  );
});
