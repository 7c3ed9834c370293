/**
 * The inbound message and its envelope, as the inbound paths (HTTP `POST /v1/mail/inbound`, SMTP)
 * hand them to ingest, and as the delivery pipeline (mailstore/), spam and Sieve read them. Data
 * only: the ingestion path itself is ingest/ports.ts (Ingest).
 */
import type { ImapSummary } from '../message/summary.js';
import type { PreAcceptance } from './spam-verdict.js';
import type { AuthResults } from '../message/auth-results.js';

/**
 * A parsed message as it crosses from the parser to the storage thread: V8's serialization
 * (encoded-message.ts encodes and decodes it). Declared here, with the contracts that carry it,
 * so the contracts need not import the codec.
 */
export type EncodedMessage = Uint8Array;

/** Content written to a file under `tmp/` as it was decoded, with its hash: a blob not yet in place. */
export interface SpooledBlob {
  spooled: string;
  sha256: string;
  size: number;
}

/** Attachment content as it reaches the blob store: in memory, or already written to `tmp/`. */
export type BlobContent = Buffer | SpooledBlob;

/** One attachment of a normalised message, decoded. */
export interface InboundAttachment {
  filename: string;
  contentType: string;
  /** Decoded bytes; a large attachment of SMTP mail is written to a file as it is decoded (blobs.ts). */
  content: BlobContent;
  contentId?: string | null;
  /** `attachment` or `inline`. */
  disposition?: string | null;
}

/** Authentication results of a message that came over SMTP (mailauth), stored with the email (message/auth-results.ts). */
export type { AuthResults };

/** A message in the fields of SPEC.md "Email", as both inbound paths produce it. */
export interface InboundMessage {
  messageId: string;
  fromEmail: string;
  fromName: string | null;
  toEmail: string;
  cc: string[];
  bcc: string[];
  subject: string;
  /** Milliseconds since the epoch. */
  receivedAt: number;
  bodyText: string | null;
  bodyHtml: string | null;
  headers: Record<string, string | string[]>;
  attachments: InboundAttachment[];
  auth: AuthResults | null;
  /**
   * SMTP mail only: IMAP's summary of the raw bytes, computed where the message is parsed (the
   * parser thread), stored with each copy so FETCH never parses it. Absent for API mail (it has no
   * bytes until rendered) and for mail too large to hold in memory (computed at its first FETCH).
   */
  imap?: ImapSummary;
  /**
   * SMTP mail held in memory: bytes of the X-Spam-* fields it came with, which a classified copy is
   * read without (src/spam/header.ts), so its size and RFC822.SIZE are counted without them.
   */
  foreignSpamBytes?: number;
  /**
   * SMTP mail held in memory: its header section as received, through the empty line, one
   * character a byte (latin1), so the filter step (Sieve) reads headers without the queue row's bytes.
   */
  rawHead?: string;
}

/**
 * Where mail for one address goes (DECISIONS.md sections 6 and 7): the mailbox itself, else an
 * active alias expanded through alias chains, else the domain's active catch-all, else unknown.
 * `not-hosted` is an address whose domain we do not provision (refused: no relaying).
 */
export type Resolution =
  | { kind: 'deliver'; tenantId: number; mailboxIds: number[]; forwards: string[] }
  | { kind: 'unknown'; tenantId: number }
  | { kind: 'not-hosted' };

/** Resolves one normalised address. Implemented by the aliases capability. */
export type RecipientResolver = (address: string) => Promise<Resolution>;

/** A message as received over SMTP, before parsing: raw bytes plus the envelope. */
export interface RawDelivery {
  /**
   * The message exactly as received, with our Received: header prepended. Small messages come as
   * the pieces the DATA stream handed over (`length` bytes in all); large ones were spilled to a file under `<dataDir>/tmp/` (not yet fsynced: ingest
   * makes it durable and takes ownership of the file).
   */
  raw: { chunks: Buffer[]; length: number } | { path: string };
  size: number;
  /** MAIL FROM; null for the null sender `<>`. */
  mailFrom: string | null;
  /** The recipients accepted at RCPT TO, each with its resolution. */
  recipients: Array<{ address: string; resolution: Extract<Resolution, { kind: 'deliver' }> }>;
  remoteAddress: string;
  heloName: string;
  tls: boolean;
  receivedAt: number;
  /**
   * A copy filed in a folder of the sender's mailbox instead of delivered (submission's Sent copy:
   * read, no email.received); `outboundRef` is the queued message of its external recipients, whose
   * items get the stored copy's id. `recipients` may then be empty. See FiledCopy.
   */
  filed?: { tenantId: number; mailboxId: number; address: string } & FiledCopy;
  /** A submission's external recipients, queued when the record is stored (see ExternalCopies). */
  external?: ExternalCopies;
  /**
   * Sent by a logged-in mailbox owner (submission), or made by this server (a DSN delivered
   * locally): nothing to verify, so the parser runs no SPF/DKIM/DMARC checks (the stored `auth` is
   * null, as for API mail), and the spam filter gives no verdict (DECISIONS.md section 18).
   */
  authenticated?: boolean;
  /** What spam policy decided before the 250 (DECISIONS.md section 18), read by the classify step. */
  spam?: PreAcceptance;
}

/**
 * How a filed copy is kept. A submission's Sent copy may share its journal record (and its one
 * parse) with the delivered copies: the record's bytes are then the delivered form, and the Sent
 * copy leaves out the header fields put in front of the message as written (Return-Path,
 * Received, DKIM-Signature): `omit.bytes` at the start, whose fields are `omit.headers`.
 */
export interface FiledCopy {
  folder: string;
  outboundRef: number | null;
  omit?: { bytes: number; headers: string[] };
  /** Recipients to count for the mailbox's daily sending limit when the copy is stored (the record then carries the count). */
  sends?: { recipients: number; at: number };
}

/**
 * The external recipients of a submission (DECISIONS.md section 13) carried by its journal record,
 * as forwards are: the transaction that stores the record's copies also writes the bytes to send
 * (the record's raw bytes after `skip`, the front put there for hosted delivery, so the DKIM-signed
 * message as it leaves) and a 'submission' outbound item per recipient, MAIL FROM being the
 * record's. A record is stored once, so a replay after a crash queues them once. Only records
 * whose raw bytes live in the queue row carry this (submission/deliver.ts).
 */
export interface ExternalCopies {
  tenantId: number;
  recipients: string[];
  skip: number;
}

/** Turns stored raw bytes into a normalised message (mailparser + mailauth). */
export type MessageParser = (raw: Buffer | { path: string }, delivery: Omit<RawDelivery, 'raw'>) => Promise<InboundMessage>;

/**
 * What ingest's worker uses for raw SMTP mail, supplied by the SMTP capability: the parsed message
 * with its attachments already durable blobs, encoded (encoded-message.ts). Parsing runs in a thread in the
 * built server; the attachment bytes never have to cross threads at all.
 */
export type RawParser = (raw: Buffer | { path: string }, delivery: Omit<RawDelivery, 'raw'>) => Promise<EncodedMessage>;

/**
 * A RawParser for raw bytes still in their queue row, which it reads itself (parser threads have a
 * read-only connection of their own), so the thread that serves SMTP and HTTP never loads them.
 */
export type QueuedRawParser = (inboundId: number, delivery: Omit<RawDelivery, 'raw'>) => Promise<EncodedMessage>;
