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
 * so). Returns undefined for an empty body. Not with `for await`: leaving that loop early destroys
 * the request and with it the socket, and the client still sending would get a reset instead of
 * the 413; here the rest keeps flowing into the discard until the lingering close ends it.
 */
export function readRawBody(ctx: Context, limit: number): Promise<Buffer | undefined> {
  const req = ctx.req;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) return Promise.reject(tooLarge(ctx, limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | null) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (err) {
        req.on('data', discard);
        reject(err);
      } else {
        resolve(size === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) settle(tooLarge(ctx, limit));
      else chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    const onError = (err: Error) => settle(err);
    const onClose = () => settle(new ApiError(400, 'Request body was cut short'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

function discard(): void { /* the rest of a refused body */ }

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
