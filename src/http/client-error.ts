import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node's HTTP parser refuses some requests before Koa sees them (a raw non-ASCII byte in the
 * request line, a malformed header, headers too large); its own answer is a 400 without a body,
 * outside the error contract. This one is node's (the same statuses, only on a connection that has
 * written nothing yet, else it is closed) with a `{status:"error", reason}` body.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }): void {
  if (err.code === 'ECONNRESET' || !socket.writable || (socket.bytesWritten ?? 0) > 0) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const reason = status === 431 ? 'Request headers too large' : status === 408 ? 'Request timed out' : 'Malformed HTTP request (non-ASCII characters in a URL must be percent-encoded)';
  const body = JSON.stringify({ status: 'error', reason });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
