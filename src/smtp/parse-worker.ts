import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { createAuthenticator } from './auth.js';
import { createBlobStore } from '../ingest/blobs.js';
import { createRawParser, limitConcurrency, storingParser, PARSE_CONCURRENCY } from './parse.js';
import type { ParseReplies, ParseReply, ParseRequests, ParserThreadOptions } from './parse-pool.js';

// One parser thread: mailparser and mailauth run here, off the event loop that serves SMTP and
// HTTP. A message that hangs or exhausts memory takes down this thread, never the server.
const options = workerData as ParserThreadOptions;
const logger = createLogger(options.logLevel);
const parse = limitConcurrency(storingParser(createRawParser({
  hostname: options.hostname,
  logger,
  authenticate: createAuthenticator({ hostname: options.hostname, dnsServers: options.dnsServers, logger }),
}), createBlobStore(options.dataDir)), PARSE_CONCURRENCY);

/** Longest a finished parse waits for others to share its reply. */
const REPLY_DELAY_MS = 2;
let outbox: ParseReplies = [];
let running = 0;
let timer: NodeJS.Timeout | null = null;

function flush(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (outbox.length === 0) return;
  const replies = outbox;
  outbox = [];
  parentPort!.postMessage(replies);
}

/** Replies leave together: at once when nothing else is being parsed, else within REPLY_DELAY_MS. */
function reply(r: ParseReply): void {
  outbox.push(r);
  running--;
  if (running === 0) flush();
  else timer ??= setTimeout(flush, REPLY_DELAY_MS);
}

parentPort!.on('message', (requests: ParseRequests) => {
  for (const req of requests) {
    running++;
    const raw = 'path' in req.raw ? { path: req.raw.path } : Buffer.from(req.raw.bytes.buffer, req.raw.bytes.byteOffset, req.raw.bytes.byteLength);
    parse(raw, req.delivery).then(
      (json) => reply({ id: req.id, ok: true, json }),
      (err: Error) => reply({ id: req.id, ok: false, error: err?.message ?? String(err) }),
    );
  }
});
