import { once } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { rawSession } from '../helpers/smtp.js';

/** How a listener reaches TLS: at once (IMAPS, submissions), or after the protocol's STARTTLS. */
export type TlsFace = 'implicit' | 'smtp-starttls' | 'imap-starttls';

/** What a client saw of the chain: the leaf and, when the server sent it, the intermediate. */
export interface SeenChain {
  fingerprint: string;
  subjectAltName: string | undefined;
  issuerCN: string;
  /** The second certificate sent, or null when the server sent the leaf alone. */
  issuerFingerprint: string | null;
}

/** Reads the chain a finished handshake presented. */
export function chainSeenBy(socket: TLSSocket): SeenChain {
  const peer = socket.getPeerCertificate(true);
  return {
    fingerprint: peer.fingerprint256,
    subjectAltName: peer.subjectaltname,
    issuerCN: String(peer.issuer.CN),
    issuerFingerprint: peer.issuerCertificate && peer.issuerCertificate !== peer ? peer.issuerCertificate.fingerprint256 : null,
  };
}

/** Waits (bounded) until the plain socket has sent a line matching `re`. */
function lineOn(socket: Socket, re: RegExp, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const done = (err?: Error) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (err) reject(err); else resolve();
    };
    const onData = (d: Buffer) => {
      buffer += d.toString('latin1');
      if (buffer.split('\r\n').some((l) => re.test(l))) done();
    };
    const onClose = () => done(new Error(`closed before ${re}: ${buffer}`));
    const timer = setTimeout(() => done(new Error(`no line matching ${re} within ${timeoutMs} ms: ${buffer}`)), timeoutMs);
    socket.on('data', onData);
    socket.on('close', onClose);
  });
}

/** Connects to 127.0.0.1:port with IMAP, says STARTTLS and returns the plain socket ready for TLS. */
async function imapStarttls(port: number): Promise<Socket> {
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await lineOn(socket, /^\* OK/);
  const answered = lineOn(socket, /^s1 (OK|NO|BAD)/);
  socket.write('s1 STARTTLS\r\n');
  await answered;
  return socket;
}

/**
 * A TLS session with one listener, naming `servername` through SNI (or none when undefined, as
 * clients that connect by address do). Certificates are read, not verified: the test compares them.
 */
export async function openTls(face: TlsFace, port: number, servername?: string): Promise<TLSSocket> {
  const sni = servername ? { servername } : {};
  let socket: TLSSocket;
  if (face === 'implicit') {
    socket = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false, ...sni });
  } else if (face === 'smtp-starttls') {
    const s = await rawSession(port);
    await s.command('EHLO client.example');
    const reply = await s.command('STARTTLS');
    if (!reply.startsWith('220 ')) { s.close(); throw new Error(`STARTTLS refused: ${reply}`); }
    s.socket.removeAllListeners('data');
    socket = tlsConnect({ socket: s.socket, rejectUnauthorized: false, ...sni });
  } else {
    socket = tlsConnect({ socket: await imapStarttls(port), rejectUnauthorized: false, ...sni });
  }
  const failed = once(socket, 'error').then(([err]) => { throw err as Error; });
  await Promise.race([once(socket, 'secureConnect'), failed]);
  failed.catch(() => undefined);
  return socket;
}

/** The chain a fresh handshake on the listener presents (the connection is closed again). */
export async function chainOn(face: TlsFace, port: number, servername?: string): Promise<SeenChain> {
  const socket = await openTls(face, port, servername);
  try {
    return chainSeenBy(socket);
  } finally {
    socket.destroy();
  }
}

/**
 * Sends a tagged IMAP command on a TLS session and resolves with its tagged answer line: proof a
 * session is still alive and served.
 */
export async function imapCommand(socket: TLSSocket, tag: string, command: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const re = new RegExp(`^${tag} (OK|NO|BAD)[^\\r\\n]*`, 'm');
    const onData = (d: Buffer) => {
      buffer += d.toString('latin1');
      const m = re.exec(buffer);
      if (m) { clearTimeout(timer); socket.off('data', onData); resolve(m[0]); }
    };
    const timer = setTimeout(() => { socket.off('data', onData); reject(new Error(`no answer to ${tag} ${command}: ${buffer}`)); }, timeoutMs);
    socket.on('data', onData);
    socket.write(`${tag} ${command}\r\n`);
  });
}
