import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../../logger.js';
import type { Conn, SessionDeps } from './session.js';
import { Session } from './session.js';
import { listenUnlessPrivileged } from '../../listen.js';

/** What the listeners need of the certificate source (src/tls). */
export interface TlsSource {
  secureContext(): tls.SecureContext;
  serverOptions(): tls.TlsOptions;
  attach(server: tls.Server): () => void;
}

/** Autologout after 30 minutes without a command (DECISIONS.md section 14; RFC 9051's minimum). */
export const AUTOLOGOUT_MS = 30 * 60_000;
/** A TLS handshake that takes longer than this is abandoned. */
const HANDSHAKE_MS = 30_000;
const MAX_CONNECTIONS = 2000;
/**
 * Concurrent connections one address may hold, across both listeners: one host cannot take every
 * slot of MAX_CONNECTIONS (a mailbox is further held to 20 sessions once logged in). Dovecot's
 * mail_max_userip_connections is 10 per user and address; 50 leaves room for NAT'd offices.
 */
export const MAX_CONNECTIONS_PER_IP = 50;

/**
 * Runs one session on a socket: bytes in, responses out, STARTTLS (the plain socket is wrapped and
 * anything the client sent after the command is dropped, so nothing injected in clear text runs
 * as if protected), autologout, and cleanup however the connection ends.
 */
function serve(socket: net.Socket, opts: { starttls: boolean; secure: boolean; tls: TlsSource; deps: SessionDeps; logger: Logger; timeoutMs: number; sockets: Set<net.Socket> }): void {
  let current: net.Socket = socket;
  let secure = opts.secure;
  opts.sockets.add(socket);
  const onData = (d: Buffer) => session.push(d);
  let corked: net.Socket | null = null;
  const uncork = () => {
    const sock = corked;
    corked = null;
    if (sock && !sock.destroyed) sock.uncork();
  };
  const conn: Conn = {
    get secure() { return secure; },
    starttls: opts.starttls,
    ip: (socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
    write(data) {
      if (current.destroyed || !current.writable) return;
      // Everything written in one turn of the event loop leaves in one go (a FETCH of thousands of
      // messages would otherwise be as many TLS records and socket writes).
      if (!corked) {
        corked = current;
        current.cork();
        process.nextTick(uncork);
      }
      if (typeof data === 'string') current.write(data);
      else for (const d of data) current.write(d);
    },
    drain() {
      const sock = current;
      if (sock.destroyed || !sock.writableNeedDrain) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => { sock.off('drain', done); sock.off('close', done); resolve(); };
        sock.on('drain', done);
        sock.on('close', done);
      });
    },
    upgrade() {
      // The answer to STARTTLS leaves in clear text before the socket is wrapped.
      uncork();
      return new Promise<void>((resolve) => {
        current.off('data', onData);
        session.discardInput();
        const wrapped = new tls.TLSSocket(current, { isServer: true, secureContext: opts.tls.secureContext(), ...pickSni(opts.tls) });
        const guard = setTimeout(() => wrapped.destroy(), HANDSHAKE_MS);
        wrapped.once('secure', () => { clearTimeout(guard); secure = true; resolve(); });
        wrapped.on('error', () => { clearTimeout(guard); wrapped.destroy(); resolve(); });
        wrapped.on('close', () => session.close());
        wrapped.on('data', onData);
        current = wrapped;
        opts.sockets.add(wrapped);
      });
    },
    close() {
      current.end();
      setTimeout(() => current.destroy(), 2000).unref();
    },
  };
  const session = new Session(conn, opts.deps);
  socket.setTimeout(opts.timeoutMs, () => {
    session.send('* BYE autologout: idle for too long');
    session.close();
  });
  socket.on('data', onData);
  socket.on('error', () => undefined);
  socket.on('close', () => { opts.sockets.delete(socket); session.close(); });
  session.greet();
}

/** The SNI callback of the source's options, so a swapped certificate reaches STARTTLS handshakes too. */
function pickSni(source: TlsSource): Pick<tls.TlsOptions, 'SNICallback'> {
  const o = source.serverOptions();
  return o.SNICallback ? { SNICallback: o.SNICallback } : {};
}

/** The two IMAP listeners: implicit TLS (993) and STARTTLS (143), either disabled when its port is null. */
export function createImapListeners(opts: { host: string; port: number | null; starttlsPort: number | null; tls: TlsSource; deps: SessionDeps; logger: Logger; timeoutMs?: number }) {
  const sockets = new Set<net.Socket>();
  const timeoutMs = opts.timeoutMs ?? AUTOLOGOUT_MS;
  const common = { tls: opts.tls, deps: opts.deps, logger: opts.logger, timeoutMs, sockets };
  const servers: net.Server[] = [];
  const perIp = new Map<string, number>();
  /** Serves the socket unless its address already holds MAX_CONNECTIONS_PER_IP; then says BYE and closes. */
  const admit = (socket: net.Socket, o: { starttls: boolean; secure: boolean }) => {
    const ip = socket.remoteAddress ?? '';
    const held = perIp.get(ip) ?? 0;
    if (held >= MAX_CONNECTIONS_PER_IP) {
      socket.on('error', () => undefined);
      socket.end('* BYE [UNAVAILABLE] too many connections from your address\r\n');
      setTimeout(() => socket.destroy(), 2000).unref();
      return;
    }
    perIp.set(ip, held + 1);
    socket.once('close', () => {
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left > 0) perIp.set(ip, left);
      else perIp.delete(ip);
    });
    serve(socket, { ...common, ...o });
  };
  let detach: (() => void) | null = null;

  function listen(server: net.Server, port: number): Promise<number> {
    server.maxConnections = MAX_CONNECTIONS;
    servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, opts.host, () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  return {
    /** Starts both; resolves with the ports (null for a disabled one). */
    async listen(): Promise<{ imapPort: number | null; imapStarttlsPort: number | null }> {
      let imapPort: number | null = null;
      let imapStarttlsPort: number | null = null;
      if (opts.port !== null) {
        const implicit = tls.createServer({ ...opts.tls.serverOptions(), handshakeTimeout: HANDSHAKE_MS }, (s) => admit(s, { starttls: false, secure: true }));
        implicit.on('tlsClientError', () => undefined);
        detach = opts.tls.attach(implicit);
        const port = opts.port;
        imapPort = await listenUnlessPrivileged('IMAP', 'MAILSTEAD_IMAP_PORT', port, opts.logger, () => listen(implicit, port));
      }
      if (opts.starttlsPort !== null) {
        const plain = net.createServer((s) => admit(s, { starttls: true, secure: false }));
        const port = opts.starttlsPort;
        imapStarttlsPort = await listenUnlessPrivileged('IMAP STARTTLS', 'MAILSTEAD_IMAP_STARTTLS_PORT', port, opts.logger, () => listen(plain, port));
      }
      return { imapPort, imapStarttlsPort };
    },

    /** Stops accepting and ends every session with BYE. */
    async close(): Promise<void> {
      detach?.();
      const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
      for (const s of sockets) {
        if (!s.destroyed && s.writable) s.write('* BYE server shutting down\r\n');
        s.destroy();
      }
      await Promise.all(closed);
    },
  };
}
