import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { MailParserOptions } from 'mailparser';
import type { BlobSpool, BlobStore } from '../blobs.js';
import type { StoredMessage } from '../../inbound/message.js';
import { storeAttachments } from '../blobs.js';
import { encodeMessage, type EncodedMessage } from '../../inbound/encoded-message.js';
import { safeMessage } from '../../inbound/safe-text.js';
import type { InboundMessage, MessageParser, RawParser } from '../../inbound/types.js';
import { imapSummary } from '../../message/summary.js';
import type { Logger } from '../../logger.js';
import type { Authenticator } from '../../mailauth/verify.js';
import { readMail, type ReadMail } from './mail-reader.js';
import { fromParsed, fromRawOnly, type DeliveryFacts } from './message.js';
import { foreignSpamFieldBytes } from '../../spam/header.js';
import { MAX_HEAD_BYTES, fixHeaderBlock, headerEnd } from '../../message/headers.js';

/** A parser of raw mail into what `J` is (the parser stack: a StoredMessage; ingest's RawParser: one encoded). */
export type ParserOf<J> = (...args: Parameters<RawParser>) => Promise<J>;

/** Bytes read from the front of a message for header repair and the raw-text fallback. */
const HEAD_READ_BYTES = 2 * MAX_HEAD_BYTES;

const PARSER_OPTIONS = {
  // Keep cid: references as they are (no data: URIs inlined into the HTML) and do no extra renderings.
  skipImageLinks: true,
  skipTextToHtml: true,
  skipTextLinks: true,
  // A 1,000-part message is still mail; the 25 MB SIZE limit bounds the work.
  maxChildNodes: 20_000,
} as MailParserOptions;

async function readHead(raw: Buffer | { path: string }): Promise<Buffer> {
  if (Buffer.isBuffer(raw)) return raw.subarray(0, HEAD_READ_BYTES);
  const handle = await open(raw.path, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_READ_BYTES);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) break;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** The message as mailparser should read it: the top header block repaired to UTF-8, the rest untouched. */
function parseSource(raw: Buffer | { path: string }, head: Buffer): Buffer | Readable {
  const end = headerEnd(head);
  const block = end ? head.subarray(0, end.headEnd) : null;
  const fixed = block ? fixHeaderBlock(block) : null;
  const repaired = fixed !== block ? fixed : null;
  if (Buffer.isBuffer(raw)) return repaired && end ? Buffer.concat([repaired, raw.subarray(end.headEnd)]) : raw;
  if (!repaired || !end) return createReadStream(raw.path);
  const rest = createReadStream(raw.path, { start: end.headEnd });
  return Readable.from((async function* () {
    yield repaired;
    yield* rest;
  })());
}

async function readMime(source: Buffer | Readable, logger: Logger, spool?: () => Promise<BlobSpool>): Promise<ReadMail | null> {
  try {
    return await readMail(source, PARSER_OPTIONS, spool);
  } catch (err) {
    logger.info({ err }, 'mailparser could not read a message; storing what the raw text gives');
    if (source instanceof Readable) source.destroy();
    return null;
  }
}

/**
 * The parser of SMTP mail (src/inbound/types.ts): reads the stored raw
 * bytes with mailparser and verifies SPF/DKIM/DMARC with mailauth, side by side. It never throws
 * on the message's content, and its text is always storable (NUL and lone surrogates as U+FFFD): malformed MIME keeps what could be decoded, unreadable MIME falls
 * back to the headers and raw text. Only an unreadable spool file (an I/O error) rejects.
 */
export function createRawParser({ hostname, authenticate, logger, spool }: {
  hostname: string; authenticate: Authenticator; logger: Logger;
  /** Where large attachments are written as they are decoded (blobs.ts); without it they are gathered in memory. */
  spool?: () => Promise<BlobSpool>;
}): MessageParser {
  return async (raw, delivery): Promise<InboundMessage> => {
    const head = await readHead(raw);
    const facts: DeliveryFacts = delivery;
    const [parsed, auth] = await Promise.all([
      readMime(parseSource(raw, head), logger, spool),
      // Submitted mail comes from a logged-in owner: SPF, DKIM and DMARC would judge our own relay (and wait on DNS).
      // Mail verified before the 250 (spam policy's DMARC p=reject check) keeps those results.
      delivery.authenticated ? null : delivery.spam?.auth
        ?? authenticate(raw, { remoteAddress: delivery.remoteAddress, heloName: delivery.heloName, mailFrom: delivery.mailFrom }, head),
    ]);
    const ctx = { hostname, head, auth };
    const imap = summaryOf(raw, logger);
    const foreign = Buffer.isBuffer(raw) ? foreignSpamFieldBytes(raw) : 0;
    const headSection = Buffer.isBuffer(raw) ? headerEnd(raw) : null;
    const extra = { ...(foreign > 0 ? { foreignSpamBytes: foreign } : {}), ...(headSection && Buffer.isBuffer(raw) ? { rawHead: raw.toString('latin1', 0, headSection.bodyStart) } : {}) };
    // Text with NUL or lone surrogates is made storable here, where it is produced (safe-text.ts).
    if (parsed) {
      try {
        return safeMessage({ ...fromParsed(parsed, facts, ctx), imap, ...extra });
      } catch (err) {
        logger.warn({ err }, 'mapping a parsed message failed; storing what the raw text gives');
      }
    }
    return safeMessage({ ...fromRawOnly(facts, ctx), imap, ...extra });
  };
}

/**
 * IMAP's summary of the bytes (ENVELOPE, BODYSTRUCTURE, size), made here so FETCH never parses
 * stored mail. Only for mail held in memory (up to the queue row's 256 KB): a spooled message is
 * not read whole for it; IMAP computes its summary at its first FETCH.
 */
function summaryOf(raw: Buffer | { path: string }, logger: Logger) {
  if (!Buffer.isBuffer(raw)) return undefined;
  try {
    return imapSummary(raw);
  } catch (err) {
    logger.warn({ err }, 'IMAP summary of a message failed; left to its first FETCH');
    return undefined;
  }
}

/** Raw messages one parser works on at the same time: authentication waits on DNS, not on the CPU. */
export const PARSE_CONCURRENCY = 16;

/** The function (a parser) with at most `limit` calls under way; later calls wait their turn in order. */
export function limitConcurrency<A extends unknown[], R>(parse: (...args: A) => Promise<R>, limit: number): (...args: A) => Promise<R> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (...args: A) => {
    // A finished parse hands its place straight to the next waiting one, so none can slip in between.
    if (running >= limit) await new Promise<void>((r) => waiting.push(r));
    else running++;
    try {
      return await parse(...args);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/**
 * The parse ingest uses: parses, and makes each attachment a durable blob where the parse ran (a
 * parser thread writes them itself, so their bytes never cross threads).
 */
export function storingParser(parse: MessageParser, blobs: Pick<BlobStore, 'putBlob'>): ParserOf<StoredMessage> {
  return async (raw, delivery) => {
    const message = await parse(raw, delivery);
    return { ...message, attachments: await storeAttachments(message.attachments, blobs) } satisfies StoredMessage;
  };
}

/** The same answering as ingest's RawParser does: the message encoded (encoded-message.ts). */
export function encodingParser(parse: ParserOf<StoredMessage>): ParserOf<EncodedMessage> {
  return async (raw, delivery) => encodeMessage(await parse(raw, delivery));
}
