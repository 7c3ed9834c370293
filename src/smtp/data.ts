import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Clock } from '../clock.js';
import { domainOf, normalizeAddress } from '../message/address.js';
import { hostnameProblem } from '../message/hostname.js';
import type { RawDelivery } from '../inbound/types.js';
import type { Logger } from '../logger.js';
import type { PreAcceptancePolicy } from '../spam/policy/types.js';
import { receivedHeader, returnPathHeader } from './received.js';
import { ReturnPathFilter } from './return-path.js';
import type { Deliverable } from './recipients.js';
import { BACKLOG_FULL, LOCAL_ERROR, MAILBOX_FULL, TOO_BIG, type SmtpReply } from '../smtp-replies.js';
import { Spool } from './spool.js';

/** What the DATA phase needs from the rest of the listener. */
export interface DataDeps {
  hostname: string;
  clock: Clock;
  logger: Logger;
  /** Directory for messages larger than `memoryLimit` (`<dataDir>/tmp`). */
  spoolDir: string;
  memoryLimit: number;
  maxSize: number;
  /** Where each accepted recipient goes, as decided at RCPT TO. */
  resolutionOf(session: SMTPServerSession, address: string): Deliverable | undefined;
  /** Commits the message durably (ingest.acceptRaw); the 250 waits for it. */
  accept(delivery: RawDelivery): Promise<void>;
  /** Mailboxes among these without room for `size` more bytes (ingest.overQuota). */
  overQuota(mailboxIds: number[], size: number): Promise<number[]>;
  /** Non-null while the ingest backlog is past its limit in time: 451 4.3.1 instead of acknowledging. */
  backlogFull?(): number | null;
  /** Spam policy at the end of DATA: may refuse the message, or add what it decided to the delivery. */
  policy?: PreAcceptancePolicy;
}

/** Whether no recipient can take a message of `size` bytes: every target mailbox full and nothing to forward. */
async function nobodyHasRoom(deps: DataDeps, recipients: RawDelivery['recipients'], size: number): Promise<boolean> {
  if (recipients.some((r) => r.resolution.forwards.length > 0)) return false;
  const ids = [...new Set(recipients.flatMap((r) => r.resolution.mailboxIds))];
  if (ids.length === 0) return false;
  const full = await deps.overQuota(ids, size);
  return full.length >= ids.length;
}

/**
 * The stored form of an RCPT address: lower-cased, with the domain as punycode whenever it is a
 * valid hostname (also behind a UTF-8 local part, which is not a valid address of ours).
 */
export function storedAddress(address: string): string {
  // The same recipients come again and again; working one out (IDNA checks) costs a few µs of the acceptor's time.
  let stored = storedAddresses.get(address);
  if (stored === undefined) {
    stored = hostnameProblem(domainOf(address)) === null ? normalizeAddress(address) : address.toLowerCase();
    if (storedAddresses.size >= STORED_ADDRESSES) storedAddresses.delete(storedAddresses.keys().next().value as string);
    storedAddresses.set(address, stored);
  }
  return stored;
}
const STORED_ADDRESSES = 1000;
const storedAddresses = new Map<string, string>();

/**
 * Receives one message: prepends the Return-Path: and Received: trace headers, streams the bytes
 * into a spool while counting them, refuses it with 552 past SIZE, and answers 250 only once
 * ingest has committed it (451 when it could not, so the sender retries). Calls `done` once.
 */
export function receiveMessage(deps: DataDeps, stream: SMTPServerDataStream, session: SMTPServerSession, done: (err: SmtpReply | null, message?: string) => void): void {
  const receivedAt = deps.clock.now();
  const queueId = `${session.id}.${session.transaction}`;
  const recipients = session.envelope.rcptTo.map((r) => r.address);
  const tls = session.tlsOptions ? `${session.tlsOptions.version ?? 'TLS'} cipher ${session.tlsOptions.name}` : null;
  const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const head = returnPathHeader(sender) + receivedHeader({
    heloName: session.hostNameAppearsAs || 'unknown',
    clientHostname: session.clientHostname || 'unknown',
    remoteAddress: session.remoteAddress,
    hostname: deps.hostname,
    protocol: session.transmissionType || 'ESMTP',
    id: queueId,
    tlsCipher: tls,
    recipients,
    at: receivedAt,
  });
  // UTF-8: with SMTPUTF8 the addresses in the trace may be non-ASCII (ASCII is the same bytes).
  const spool = new Spool({ dir: deps.spoolDir, head: Buffer.from(head, 'utf8'), memoryLimit: deps.memoryLimit, maxBytes: deps.maxSize });
  let finished = false;
  const finish = (err: SmtpReply | null, message?: string) => {
    if (finished) return;
    finished = true;
    done(err, message);
  };

  stream.once('error', (err) => {
    // The client went away (or timed out) mid-message: nothing was acknowledged, nothing is kept.
    deps.logger.debug({ err, session: session.id }, 'smtp data aborted');
    spool.destroy();
    finish(LOCAL_ERROR());
  });
  spool.once('error', (err) => {
    deps.logger.error({ err, session: session.id }, 'smtp spool failed');
    filter.unpipe(spool);
    filter.resume();
    void spool.release();
    finish(LOCAL_ERROR());
  });
  spool.once('finish', () => void complete());
  // The message's own Return-Path goes: the one in front is ours (DECISIONS.md section 21).
  const filter = new ReturnPathFilter();
  stream.pipe(filter).pipe(spool);

  async function complete(): Promise<void> {
    if (spool.exceeded) {
      await spool.release();
      return finish(TOO_BIG(deps.maxSize));
    }
    const accepted: RawDelivery['recipients'] = [];
    for (const address of recipients) {
      const resolution = deps.resolutionOf(session, address);
      if (resolution) accepted.push({ address: storedAddress(address), resolution });
    }
    const delivery: RawDelivery = {
      raw: spool.result(),
      size: spool.size,
      mailFrom: sender === '' ? null : sender,
      recipients: accepted,
      remoteAddress: session.remoteAddress,
      heloName: session.hostNameAppearsAs || '',
      tls: !!session.secure,
      receivedAt,
    };
    try {
      if (accepted.length === 0) throw new Error('no resolved recipient for an accepted envelope');
      if (await nobodyHasRoom(deps, accepted, delivery.size)) {
        await spool.release();
        return finish(MAILBOX_FULL());
      }
      // The backlog may have passed its limit while this message was sent (MAIL FROM checked it first).
      if ((deps.backlogFull?.() ?? null) !== null) {
        await spool.release();
        return finish(BACKLOG_FULL());
      }
      if (deps.policy) {
        const clientHostname = session.clientHostname && !session.clientHostname.startsWith('[') ? session.clientHostname : null;
        const decision = await deps.policy.message(delivery, { queueId, clientHostname });
        if (decision.refuse) {
          await spool.release();
          return finish(decision.refuse);
        }
        if (decision.spam) delivery.spam = decision.spam;
      }
      await deps.accept(delivery);
    } catch (err) {
      deps.logger.error({ err, session: session.id }, 'smtp ingest commit failed');
      await spool.release();
      return finish(LOCAL_ERROR());
    }
    deps.logger.debug({ session: session.id, id: queueId, size: delivery.size, rcpt: accepted.length }, 'smtp message accepted');
    finish(null, `2.0.0 Ok: queued as ${queueId}`);
  }
}
