import net from 'node:net';
import tls from 'node:tls';
import type { ExecutionContext } from 'ava';

/**
 * A bare ManageSieve connection: `send` writes raw bytes, `response` reads up to the next OK, NO
 * or BYE line (literals in between are read whole), bounded in time. `starttls` upgrades.
 */
export async function rawSieve(t: ExecutionContext, port: number) {
  let socket: net.Socket = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let closed = false;
  let wake: (() => void) | null = null;
  const attach = (s: net.Socket) => {
    s.on('data', (d: Buffer) => { buf = Buffer.concat([buf, d]); wake?.(); });
    s.on('close', () => { closed = true; wake?.(); });
    s.on('error', () => undefined);
  };
  attach(socket);
  t.teardown(() => { socket.destroy(); });

  /** The end of the first complete response in buf (after literals), or -1. */
  function responseEnd(): number {
    let i = 0;
    for (;;) {
      const lf = buf.indexOf(0x0a, i);
      if (lf < 0) return -1;
      const line = buf.subarray(i, lf + 1).toString('utf8');
      const lit = /\{(\d+)\}\r\n$/.exec(line);
      if (lit) {
        const end = lf + 1 + Number(lit[1]);
        if (buf.length < end) return -1;
        // A response line whose text is a literal ends with the literal and its CRLF.
        if (/^(OK|NO|BYE)\b/.test(line)) return buf.length < end + 2 ? -1 : end + 2;
        i = end;
        continue;
      }
      if (/^(OK|NO|BYE)\b/.test(line)) return lf + 1;
      i = lf + 1;
    }
  }

  const c = {
    send(data: string | Buffer) { socket.write(data); },
    /** Everything up to and including the next OK/NO/BYE line. */
    async response(timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = responseEnd();
        if (end >= 0) {
          const out = buf.subarray(0, end).toString('utf8');
          buf = buf.subarray(end);
          return out;
        }
        if (closed) throw new Error(`connection closed; pending: ${buf.toString('utf8')}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no response in ${timeoutMs} ms; pending: ${buf.toString('utf8').slice(0, 300)}`);
        await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, Math.min(left, 200)); });
        wake = null;
      }
    },
    async command(line: string | Buffer): Promise<string> {
      socket.write(line);
      return c.response();
    },
    async starttls(): Promise<string> {
      const ok = await c.command('STARTTLS\r\n');
      if (!ok.startsWith('OK')) throw new Error(`STARTTLS refused: ${ok}`);
      socket.removeAllListeners('data');
      const plain = socket;
      socket = tls.connect({ socket: plain, rejectUnauthorized: false, servername: 'mx.mailstead.test' });
      attach(socket);
      await new Promise<void>((resolve, reject) => { socket.once('secureConnect', () => resolve()); socket.once('error', reject); });
      return c.response();
    },
    async login(user: string, password: string): Promise<string> {
      const b64 = Buffer.from(`\0${user}\0${password}`).toString('base64');
      return c.command(`AUTHENTICATE "PLAIN" "${b64}"\r\n`);
    },
    get closed() { return closed; },
  };
  return c;
}
export type RawSieve = Awaited<ReturnType<typeof rawSieve>>;

/** A PUTSCRIPT with the script as a non-synchronizing literal. */
export const putScript = (name: string, script: string, sync = false) =>
  `PUTSCRIPT "${name}" {${Buffer.byteLength(script)}${sync ? '' : '+'}}\r\n${script}\r\n`;
