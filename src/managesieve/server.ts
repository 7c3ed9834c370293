import net from 'node:net';
import tls from 'node:tls';
import type { TlsSource } from '../imap/protocol/server.js';
import type { Logger } from '../logger.js';
import { Session, type CommandSpec, type Conn, type SessionDeps } from './session.js';

/** An idle connection is closed after this long (RFC 5804 leaves it to the server; IMAP's 30 minutes). */
export const IDLE_MS = 30 * 60_000;
const HANDSHAKE_MS = 30_000;
const MAX_CONNECTIONS = 500;
export const MAX_CONNECTIONS_PER_IP = 20;

/** Runs one session on a plain socket that may turn to TLS with STARTTLS. */
function serve(socket: net.Socket, o: { tls: TlsSource; deps: SessionDeps; commands: Record<string, CommandSpec>; capabilities: (secure: boolean, authed: boolean) => string; sockets: Set<net.Socket> }): void {
  let current: net.Socket = socket;
  let secure = false;
  o.sockets.add(socket);
  const onData = (d: Buffer) => session.push(d);
  const conn: Conn = {
    ip: (socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    get secure() { return secure; },
    write(text) { if (!current.destroyed && current.writable) current.write(text); },
    upgrade() {
      return new Promise<boolean>((resolve) => {
        current.off('data', onData);
        const sni = o.tls.serverOptions().SNICallback;
        const wrapped = new tls.TLSSocket(current, { isServer: true, secureContext: o.tls.secureContext(), ...(sni ? { SNICallback: sni } : {}) });
        const guard = setTimeout(() => wrapped.destroy(), HANDSHAKE_MS);
        wrapped.once('secure', () => { clearTimeout(guard); secure = true; resolve(true); });
        wrapped.on('error', () => { clearTimeout(guard); wrapped.destroy(); resolve(false); });
        wrapped.on('close', () => session.close());
        wrapped.on('data', onData);
        current = wrapped;
        o.sockets.add(wrapped);
        wrapped.once('close', () => o.sockets.delete(wrapped));
      });
    },
    close() {
      current.end();
      setTimeout(() => current.destroy(), 2000).unref();
    },
  };
  const session: Session = new Session(conn, o.deps, o.commands, () => o.capabilities(secure, session.state === 'auth'));
  socket.setTimeout(IDLE_MS, () => session.bye('idle for too long'));
  socket.on('data', onData);
  socket.on('error', () => undefined);
  socket.on('close', () => { o.sockets.delete(socket); session.close(); });
  session.greet();
}

/** The ManageSieve listener (DECISIONS.md section 19). */
export function createManageSieveListener(opts: {
  host: string; port: number; tls: TlsSource; deps: SessionDeps; commands: Record<string, CommandSpec>;
  capabilities: (secure: boolean, authed: boolean) => string;
}) {
  const sockets = new Set<net.Socket>();
  const perIp = new Map<string, number>();
  const server = net.createServer((socket) => {
    const ip = socket.remoteAddress ?? '';
    const held = perIp.get(ip) ?? 0;
    socket.on('error', () => undefined);
    if (held >= MAX_CONNECTIONS_PER_IP) {
      socket.end('BYE (TRYLATER) "too many connections from your address"\r\n');
      setTimeout(() => socket.destroy(), 2000).unref();
      return;
    }
    perIp.set(ip, held + 1);
    socket.once('close', () => {
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left > 0) perIp.set(ip, left); else perIp.delete(ip);
    });
    serve(socket, { tls: opts.tls, deps: opts.deps, commands: opts.commands, capabilities: opts.capabilities, sockets });
  });
  server.maxConnections = MAX_CONNECTIONS;
  return {
    listen(): Promise<number> {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => resolve((server.address() as net.AddressInfo).port));
      });
    },
    async close(): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) {
        if (!s.destroyed && s.writable) s.write('BYE "server shutting down"\r\n');
        s.destroy();
      }
      if (server.listening) await closed;
    },
  };
}
