import { once } from 'node:events';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { rawSession } from '../helpers/smtp.js';

/** An SMTP session upgraded with STARTTLS, held open so a test can use it across a certificate swap. */
export interface SecureSession {
  /** SHA-256 fingerprint of the certificate the server presented (colon hex, as X509Certificate gives it). */
  fingerprint: string;
  /** The server certificate's subjectAltName string. */
  subjectAltName: string | undefined;
  /** Sends a command over TLS and resolves with the final reply line. */
  command(line: string): Promise<string>;
  socket: TLSSocket;
  close(): void;
}

/**
 * Connects to the SMTP listener, says EHLO, issues STARTTLS and completes the handshake, naming
 * `servername` through SNI, or sending no SNI at all when it is undefined (clients that connect by
 * address), which smtp-server answers from its own default context.
 */
export async function startTls(port: number, servername?: string): Promise<SecureSession> {
  const s = await rawSession(port);
  await s.command('EHLO client.example');
  const reply = await s.command('STARTTLS');
  if (!reply.startsWith('220 ')) { s.close(); throw new Error(`STARTTLS refused: ${reply}`); }
  s.socket.removeAllListeners('data');
  const socket = tlsConnect({ socket: s.socket, rejectUnauthorized: false, ...(servername ? { servername } : {}) });
  await once(socket, 'secureConnect');
  const peer = socket.getPeerCertificate();
  let buffer = '';
  let waiting: ((line: string) => void) | null = null;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    const m = /(?:^|\r\n)(\d{3} [^\r\n]*)\r\n$/.exec(buffer);
    if (m && waiting) { const w = waiting; waiting = null; buffer = ''; w(m[1]); }
  });
  return {
    fingerprint: peer.fingerprint256,
    subjectAltName: peer.subjectaltname,
    socket,
    command(line) {
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply to ${line} within 15 s`)), 15_000);
        waiting = (l) => { clearTimeout(timer); resolve(l); };
        socket.write(`${line}\r\n`);
      });
    },
    close: () => socket.destroy(),
  };
}

/** The fingerprint a fresh STARTTLS handshake sees now (the session is closed again). */
export async function fingerprintNow(port: number, servername?: string): Promise<string> {
  const s = await startTls(port, servername);
  s.close();
  return s.fingerprint;
}
