import type { Context } from 'koa';
import { ApiError, unprocessable } from '../errors.js';
import { lingerAfterResponse } from './linger.js';

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 413 of a body over `limit`; the rest of it is read and discarded before the connection closes. */
function tooLarge(ctx: Context, limit: number): ApiError {
  lingerAfterResponse(ctx);
  return new ApiError(413, `Request body is larger than ${limit} bytes`);
}

/**
 * Reads a request body up to `limit` bytes (413 past it, before reading when Content-Length says
 * so). Returns undefined for an empty body.
 */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer | undefined> {
  const req = ctx.req;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw tooLarge(ctx, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(ctx, limit);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/**
 * Reads a JSON request body up to `limit` bytes. Strict on purpose: the body must be JSON, valid
 * UTF-8 and within the limit, each failure with its own clear answer (415, 422, 413). Returns
 * undefined for an empty body.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const req = ctx.req;
  const declared = Number(req.headers['content-length'] ?? NaN);
  const hasBody = declared > 0 || (req.headers['transfer-encoding'] !== undefined && Number.isNaN(declared));
  if (!hasBody) return undefined;
  const type = req.headers['content-type'];
  if (type !== undefined && !JSON_TYPE.test(type)) {
    throw new ApiError(415, 'Content-Type must be application/json');
  }
  const raw = await readRawBody(ctx, limit);
  if (raw === undefined) return undefined;
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw unprocessable('Request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw unprocessable('Malformed JSON body');
  }
}
