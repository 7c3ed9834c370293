import type { Socket } from 'node:net';

/**
 * Replies written in the same turn of the event loop leave in one write.
 *
 * A pipelining client sends MAIL FROM, RCPT TO and DATA in one packet, and smtp-server answers each
 * with its own `socket.write`: three system calls (and three wake-ups of the client) per message
 * where one does. The socket is corked at the first write of a turn and uncorked in the next check
 * phase, so the order of replies is kept and none waits longer than the rest of the turn. A `220`
 * (the banner, and the reply to STARTTLS, after which smtp-server wraps the socket in TLS at once)
 * is flushed immediately.
 */
export function coalesceReplies(socket: Socket): void {
  const write = socket.write;
  let corked = false;
  const flush = () => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  socket.write = function coalescedWrite(this: Socket, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    const ok = (write as (...a: unknown[]) => boolean).apply(this, args);
    if (typeof args[0] === 'string' && args[0].startsWith('220')) flush();
    return ok;
  } as Socket['write'];
}
