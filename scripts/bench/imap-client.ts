/**
 * A bare IMAP client over TLS for the IMAP benchmark: it writes commands and waits for the tagged
 * reply, without parsing the untagged responses. imapflow builds an object per FETCH item; on two
 * shared cores that client-side work would be a large part of what a header sync "takes", and it
 * would be the same for both servers, hiding the difference between them.
 */
import net from 'node:net';
import tls from 'node:tls';

export class RawImap {
  private chunks: Buffer[] = [];
  private tail = '';
  private tagSeq = 0;
  private wake: (() => void) | null = null;
  private closed = false;
  /** Bytes received since the last `take()`. */
  received = 0;

  private constructor(private readonly socket: tls.TLSSocket) {
    socket.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.received += d.length;
      // Only the end of the stream is scanned for the tagged reply; 4 KB covers any status line.
      this.tail = (this.tail + d.toString('latin1')).slice(-4096);
      this.wake?.();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => { this.closed = true; this.wake?.(); });
  }

  /** Connects with implicit TLS from `localAddress` (a loopback address) and waits for the greeting (bounded by `timeoutMs`). */
  static async open(port: number, timeoutMs = 60_000, localAddress = '127.0.0.1'): Promise<RawImap> {
    const socket = tls.connect({ socket: net.connect({ port, host: '127.0.0.1', localAddress }), rejectUnauthorized: false });
    const c = new RawImap(socket);
    await c.until(/^\* OK/m, timeoutMs);
    return c;
  }

  /** Waits until the unread text matches `re`; returns it (and clears it). */
  async until(re: RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (re.test(this.tail)) return this.take();
      if (this.closed) throw new Error(`connection closed waiting for ${re}: ${this.tail.slice(-300)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${re}: ${this.tail.slice(-300)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => { clearTimeout(t); this.wake = null; resolve(); };
      });
    }
  }

  /** Everything received and not yet taken, as latin1 text. */
  private take(): string {
    const text = Buffer.concat(this.chunks).toString('latin1');
    this.chunks = [];
    this.tail = '';
    return text;
  }

  /** Sends a command and returns everything up to and including its tagged OK (throws on NO / BAD). */
  async cmd(command: string, timeoutMs = 300_000): Promise<string> {
    const tag = `b${++this.tagSeq}x`;
    this.take();
    this.socket.write(`${tag} ${command}\r\n`);
    const text = await this.until(new RegExp(`(^|\\r\\n)${tag} (OK|NO|BAD)[^\\r\\n]*\\r\\n$`), timeoutMs);
    if (!new RegExp(`(^|\\r\\n)${tag} OK`).test(text.slice(-1024))) throw new Error(`${command.slice(0, 40)}: ${text.slice(-300)}`);
    return text;
  }

  /** Starts IDLE and waits for the continuation. */
  async idle(): Promise<void> {
    this.take();
    this.socket.write(`i${++this.tagSeq} IDLE\r\n`);
    await this.until(/^\+/m);
  }

  write(text: string): void {
    this.socket.write(text);
  }

  close(): void {
    this.socket.destroy();
  }
}
