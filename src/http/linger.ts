import type { Socket } from 'node:net';
import type { Context } from 'koa';

/** How long a refused request's remaining body is read and thrown away before the connection closes. */
export const LINGER_MS = 5_000;

/**
 * A lingering close (as nginx's `lingering_close`): the response ends the connection, but the
 * rest of the request body is read and discarded for up to LINGER_MS first. Closing a socket
 * with unread data in its receive buffer sends a TCP reset, and a client still sending its body
 * would then see "connection reset" instead of the 413 it was sent.
 *
 * Node ends a `Connection: close` response's socket with `destroySoon()`; for this socket it
 * becomes: end our side (the client reads the whole answer and our FIN), keep reading until the
 * client finishes or the time is up, then destroy. The HTTP server's sockets allow half-open.
 */
export function lingerAfterResponse(ctx: Context): void {
  ctx.set('Connection', 'close');
  const socket = ctx.req.socket as Socket & { lingering?: boolean };
  if (socket.lingering) return;
  socket.lingering = true;
  socket.destroySoon = function lingeringClose(this: Socket) {
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => { clearTimeout(timer); this.destroy(); });
    this.once('close', () => clearTimeout(timer));
    this.on('data', discard);
    this.resume();
    this.end();
  };
}

function discard(): void { /* the refused body's bytes */ }
