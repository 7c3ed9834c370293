/**
 * The types that pass between the steps of the delivery pipeline (mailstore/pipeline.ts): what a step is
 * given about a message and its recipients, and what it decides per copy.
 */
import type { Db } from '../db/connection.js';
import type { Screening } from './spam-verdict.js';
import type { StoredMessage, Target } from './message.js';

/** A queued message ready to be delivered: where its copies go and what they hold. */
export interface Delivery {
  /** Its inbound (queue) row. */
  id: number;
  kind: 'api' | 'smtp';
  targets: Target[];
  message: StoredMessage;
  /** The envelope sender (MAIL FROM, or from_email over the API); null for the null sender. */
  mailFrom: string | null;
  size: number;
  /** The raw file of SMTP mail kept outside its row, removed once nothing references it. */
  rawPath: string | null;
  /** What the spam filter is told beyond the message (src/spam/filing.ts): the SMTP side's pre-acceptance, a logged-in sender. */
  screening?: Screening;
}

/** One hosted mailbox a message is delivered to (not a filed Sent copy): a copy is decided for each. */
export interface Recipient {
  tenantId: number;
  mailboxId: number;
  /** The recipient address that led to the mailbox (to_email of its copy). */
  address: string;
}

/**
 * Where and how one recipient's copy is stored. `folder` must exist or be a default folder of the
 * mailbox (a step that creates folders does so in the transaction it is given); a folder that is
 * missing when the copy is filed files it into INBOX, so a message is never lost to a name.
 */
export interface Placement {
  /** Default 'INBOX'. */
  folder: string;
  /** IMAP keywords and flags but \Recent (e.g. `$Junk`), stored with the copy; `\Seen` stores it read. */
  keywords: string[];
  /**
   * Header lines put in front of the stored message (a trace header such as X-Spam-Status), each
   * ending in CRLF: in front of the copy's raw bytes, and first among its stored header fields.
   */
  prepend?: string;
  /** The spam verdict kept with the copy (DECISIONS.md section 18); carried to the file step, not stored yet. */
  spam?: unknown;
  /**
   * Further copies of the message in the same mailbox (Sieve `fileinto :copy` beside `keep`): each
   * stored like this one in its own folder, free to repeat the message_id as a filed copy is.
   */
  also?: Array<{ folder: string; keywords: string[] }>;
}

/** The placement of a copy nothing decided otherwise for: INBOX, no keywords. */
export const inboxPlacement = (): Placement => ({ folder: 'INBOX', keywords: [] });

/** A copy sent on (Sieve `redirect`): queued like a forwarder's copy, from the recipient's domain. */
export interface Redirect {
  recipient: Recipient;
  /** The address it goes to. */
  to: string;
}

/**
 * A message of ours in answer to the delivered one (Sieve vacation, reject): queued from the null
 * sender `<>` with its own bytes, so it never causes a bounce of its own.
 */
export interface Reply {
  recipient: Recipient;
  /** The address it goes to (the delivered message's envelope sender). */
  to: string;
  /** The whole RFC 5322 message. */
  raw: Buffer;
}

/** What a message's filter asks for besides its copies: queued in the transaction that stores them. */
export interface SideEffects {
  redirects: Redirect[];
  replies: Reply[];
}

/** Per recipient (same order): the classification step's verdict as a placement. */
export type Classified = Placement[];

/** Per recipient (same order): the placement to store, or null to store no copy (Sieve `discard`, `redirect` without keep), and the side effects. */
export interface Filtered {
  placements: Array<Placement | null>;
  effects: SideEffects;
  /** Scripts that failed on the message (its copy kept in INBOX), for the log. */
  errors?: Array<{ mailboxId: number; inboundId: number; message: string }>;
}

/** A message of the batch and the mailboxes it is delivered to (at least one). */
export interface Addressed {
  delivery: Delivery;
  recipients: Recipient[];
}

/**
 * The classification step (spam, DECISIONS.md section 18): a verdict per recipient, as the
 * placement its copy would get (junk: Junk with `$Junk` and an X-Spam-Status prepend). It is given
 * the whole batch at once, so that what it reads (model totals, token counts, sender lists) is one
 * statement per batch rather than per message; the answer has one Classified per message, in the
 * same order. Runs inside the batch's transaction `trx` (it may read and write its own tables there).
 */
export type ClassifyStep = (trx: Db, batch: Addressed[], now: number) => Promise<Classified[]>;

/**
 * The filter step (Sieve, DECISIONS.md section 19): from the classified placements, the final one
 * per recipient and the redirects and replies to queue. Runs inside the batch's transaction `trx`.
 */
export type FilterStep = (trx: Db, delivery: Delivery, recipients: Recipient[], classified: Classified, now: number) => Promise<Filtered>;

/** The two decision steps of the pipeline, replaceable together (the defaults are classify.ts and filter.ts). */
export interface DecisionSteps {
  classify: ClassifyStep;
  filter: FilterStep;
}
