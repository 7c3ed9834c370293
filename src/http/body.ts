import type { Context } from 'koa';
import { ApiError, unprocessable } from '../errors.js';

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  if (declared > limit) {
    ctx.set('Connection', 'close');
    throw new ApiError(413, `Request body is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.set('Connection', 'close');
      throw new ApiError(413, `Request body is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  } catch {
    throw unprocessable('Request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw unprocessable('Malformed JSON body');
  }
}
