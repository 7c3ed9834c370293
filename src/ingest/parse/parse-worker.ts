import { parentPort, workerData } from 'node:worker_threads';
import { openReader, type Reader } from '../../db/read-connection.js';
import { createLogger } from '../../logger.js';
import { limitConcurrency, PARSE_CONCURRENCY } from './parse.js';
import { createUnlimitedParserStack } from './parser-stack.js';
import type { ParseReplies, ParseReply, ParseRequest, ParseRequests, ParserThreadOptions } from './parse-pool.js';

// One parser thread: mailparser and mailauth run here, off the event loop that serves SMTP and
// HTTP. A message that hangs or exhausts memory takes down this thread, never the server.
const options = workerData as ParserThreadOptions;
// Not lowered in priority, unlike the storage thread: two threads at nice 10 ended up on one core
// (CFS balances by weight, and 2 x 110 looked lighter than the acceptor's 1,024) while the other
// core idled, so a backlog drained at ~60 % of a core each. The worker paces the parser already
// (it parses only the batches asked for), so the acceptor keeps its share while mail arrives
// (docs/PERFORMANCE.md, "Allocator, GC and thread settings").
const logger = createLogger(options.logLevel);
const parse = createUnlimitedParserStack({ hostname: options.hostname, dnsServers: options.dnsServers, dataDir: options.dataDir, logger });

/** Longest a finished parse waits for others to share its reply. */
const REPLY_DELAY_MS = 2;
type Done = { id: number; ok: true; encoded: Uint8Array } | { id: number; ok: false; error: string };
let outbox: Done[] = [];
let running = 0;
let timer: NodeJS.Timeout | null = null;

/** Posts the finished parses: their encoded messages in one buffer of its own, transferred. */
function flush(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (outbox.length === 0) return;
  const done = outbox;
  outbox = [];
  let total = 0;
  for (const d of done) if (d.ok) total += d.encoded.byteLength;
  const bytes = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  const replies: ParseReply[] = done.map((d) => {
    if (!d.ok) return d;
    const length = d.encoded.byteLength;
    bytes.set(d.encoded, offset);
    offset += length;
    return { id: d.id, ok: true, offset: offset - length, length };
  });
  const view = new Uint8Array(bytes.buffer, 0, total);
  parentPort!.postMessage({ bytes: view, replies } satisfies ParseReplies, [bytes.buffer]);
}

/** Replies leave together: at once when nothing else is being parsed, else within REPLY_DELAY_MS. */
function reply(d: Done): void {
  outbox.push(d);
  running--;
  if (running === 0) flush();
  else timer ??= setTimeout(flush, REPLY_DELAY_MS);
}

/** The queue's raw bytes are read here, so they never pass through the thread that serves SMTP and HTTP. */
let reader: Reader | null = null;
function queuedRaw(inboundId: number): Buffer {
  // Each queued message is read once: a page cache would only hold raw bytes already parsed.
  reader ??= openReader(options.databaseFile, { cacheKb: 512 });
  const row = reader.prepare('select raw from inbound where id = ?').get(inboundId) as { raw: Buffer | null } | undefined;
  if (!row?.raw) throw new Error(`inbound row ${inboundId} has no raw bytes`);
  return row.raw;
}

function rawOf(req: ParseRequest): Buffer | { path: string } {
  if ('path' in req.raw) return { path: req.raw.path };
  if ('inbound' in req.raw) return queuedRaw(req.raw.inbound);
  return Buffer.from(req.raw.bytes.buffer, req.raw.bytes.byteOffset, req.raw.bytes.byteLength);
}

/**
 * One request: its raw bytes are read when its parse starts, not when the batch arrives, so at most
 * PARSE_CONCURRENCY messages are in memory here, not a whole batch (up to BATCH_BYTES of them).
 */
const parseRequest = limitConcurrency(async (req: ParseRequest) => parse(rawOf(req), req.delivery), PARSE_CONCURRENCY);

parentPort!.on('message', (requests: ParseRequests) => {
  for (const req of requests) {
    running++;
    parseRequest(req).then(
      (encoded) => reply({ id: req.id, ok: true, encoded }),
      (err: Error) => reply({ id: req.id, ok: false, error: err?.message ?? String(err) }),
    );
  }
});
