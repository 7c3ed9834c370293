import { rootCertificates } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

/** How the session to one MX address is secured (DECISIONS.md section 12). */
export type TlsMode =
  /** STARTTLS whenever offered, certificate not checked; a failed handshake falls back to plaintext. */
  | 'opportunistic'
  /** STARTTLS required with a certificate valid for `servername` (an MTA-STS policy in enforce mode). */
  | 'required'
  /** No STARTTLS (the fallback after a broken handshake). */
  | 'none';

/** One MX address to talk to. */
export interface Hop {
  /** The MX host name (certificate name under MTA-STS). */
  host: string;
  address: string;
  port: number;
  tls: TlsMode;
}

/** Settings of every session. */
export interface TransportOptions {
  /** EHLO name (MAILSTEAD_HOSTNAME). */
  name: string;
  /** Connect, greeting and inactivity limit in ms (one number keeps the faults bounded; RFC 5321 4.5.3.2 allows more). */
  timeoutMs: number;
  /** An extra CA trusted next to the public roots in `required` sessions (tests). */
  ca?: string | Buffer;
}

/** What one recipient of a transaction came to. */
export interface RcptResult {
  rcpt: string;
  /** 2xx, 4xx, 5xx: the reply (or the error text) decides. */
  outcome: 'sent' | 'temporary' | 'permanent';
  response: string;
}

/** A failure before any reply about the message: try the next address, or retry later. */
export class SessionError extends Error {
  constructor(message: string, readonly code: string) { super(message); }
}

type SmtpError = SMTPConnection.SMTPError & { rejectedErrors?: Array<SMTPConnection.SMTPError & { recipient?: string }> };

const byCode = (code: number | undefined): RcptResult['outcome'] => (code && code >= 500 ? 'permanent' : 'temporary');
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 1000);

/**
 * One SMTP session to one MX address (nodemailer's smtp-connection), usable for several
 * transactions in a row: `send` runs one. A transaction that ended with the reply to the message
 * leaves the session ready for the next MAIL (RFC 5321 4.1.4); one that ended otherwise (the
 * envelope or DATA refused) is reset (RSET) before the session is used again.
 */
export class Session {
  private readonly conn: SMTPConnection;
  private broken = false;
  /** Whether a transaction may still be open at the remote (a send that did not end with the reply to the message). */
  private open = false;
  /** Transactions started over this connection. */
  private started = 0;

  private constructor(readonly hop: Hop, conn: SMTPConnection) {
    this.conn = conn;
    // Errors after connecting also reach the pending send's callback; the listener keeps them from being thrown.
    conn.on('error', () => { this.broken = true; });
    conn.on('end', () => { this.broken = true; });
  }

  /** Opens and greets (EHLO, STARTTLS as `hop.tls` says); rejects with a SessionError. */
  static open(hop: Hop, opts: TransportOptions): Promise<Session> {
    const conn = new SMTPConnection({
      host: hop.address, port: hop.port, name: opts.name, secure: false,
      ignoreTLS: hop.tls === 'none', requireTLS: hop.tls === 'required', opportunisticTLS: hop.tls === 'opportunistic',
      tls: hop.tls === 'required'
        ? { rejectUnauthorized: true, servername: hop.host, ...(opts.ca ? { ca: [...rootCertificates, opts.ca] } : {}), minVersion: 'TLSv1.2' as const }
        : { rejectUnauthorized: false, servername: hop.host },
      connectionTimeout: opts.timeoutMs, greetingTimeout: opts.timeoutMs, socketTimeout: opts.timeoutMs, dnsTimeout: opts.timeoutMs,
      logger: false,
    });
    return new Promise((resolve, reject) => {
      let done = false;
      const fail = (err: SmtpError) => {
        if (done) return;
        done = true;
        conn.close();
        reject(new SessionError(describe(hop, err), err.code ?? 'ECONNECTION'));
      };
      conn.once('error', fail);
      conn.connect(() => {
        if (done) return;
        done = true;
        conn.removeListener('error', fail);
        resolve(new Session(hop, conn));
      });
    });
  }

  /** Whether the session can take another transaction. */
  get usable(): boolean { return !this.broken; }

  /** Whether the session runs over TLS. */
  get secure(): boolean { return (this.conn as unknown as { secure?: boolean }).secure === true; }

  /** Whether a transaction ran over this connection before (a reused connection). */
  get reused(): boolean { return this.started > 0; }

  /**
   * Ends the transaction state of a previous message (RSET) so the session can be reused; no
   * command (and no round trip) when the previous transaction ended with the reply to its message.
   */
  reset(): Promise<boolean> {
    if (!this.open) return Promise.resolve(true);
    return new Promise((resolve) => this.conn.reset((err) => {
      if (!err) this.open = false;
      resolve(!err);
    }));
  }

  /**
   * One transaction: MAIL FROM `from` ('' = <>), RCPT TO each of `to`, DATA `raw`. Answers per
   * recipient; rejects with a SessionError when the connection failed before the message's fate
   * was known (timeout, dropped connection, garbage), which retries every recipient.
   */
  send(from: string, to: string[], raw: Buffer): Promise<RcptResult[]> {
    this.open = true;
    this.started++;
    return new Promise((resolve, reject) => {
      this.conn.send({ from, to, size: raw.length, use8BitMime: true } as SMTPConnection.Envelope, raw, (err, info) => {
        // The reply to the message ended the transaction at both ends.
        if (!err) this.open = false;
        if (err) {
          const e = err as SmtpError;
          const perRcpt = new Map((e.rejectedErrors ?? []).map((r) => [r.recipient ?? '', r]));
          if (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') {
            if (!e.response && e.command === 'API') { reject(new SessionError(e.message, 'EAPI')); return; }
            resolve(to.map((rcpt) => {
              const r = perRcpt.get(rcpt) ?? e;
              return { rcpt, outcome: byCode(r.responseCode), response: oneLine(r.response ?? r.message) };
            }));
            return;
          }
          this.broken = true;
          reject(new SessionError(describe(this.hop, e), e.code ?? 'ECONNECTION'));
          return;
        }
        const rejected = new Map((info.rejectedErrors ?? []).map((r) => [(r as { recipient?: string }).recipient ?? '', r]));
        resolve(to.map((rcpt) => {
          const r = rejected.get(rcpt);
          return r ? { rcpt, outcome: byCode(r.responseCode), response: oneLine(r.response ?? r.message) }
            : { rcpt, outcome: 'sent', response: oneLine(info.response) };
        }));
      });
    });
  }

  /** Closes the socket at once, whatever the session is doing. */
  abort(): void {
    this.broken = true;
    this.conn.close();
  }

  /** Ends the session politely (QUIT) when it still can, else closes the socket. */
  close(): void {
    if (this.broken) this.conn.close();
    else this.conn.quit();
    this.broken = true;
  }
}

/** A failure as the queue shows it: where, and what went wrong (the remote's reply when it gave one). */
function describe(hop: Hop, err: SmtpError): string {
  const where = `${hop.host}[${hop.address}]:${hop.port}`;
  return oneLine(err.response ? `${where} said: ${err.response}` : `${where}: ${err.message} (${err.code ?? 'error'})`);
}
