import type { RawDelivery } from '../../inbound/types.js';
import type { SmtpReply } from '../../smtp-replies.js';
import type { PreAcceptance } from '../../inbound/spam-verdict.js';

/** The facts of one accepted RCPT that the policy judges. */
export interface RecipientFacts {
  remoteAddress: string;
  /** The recipient as accepted (a hosted address: its resolution delivers). */
  address: string;
}

/** Facts of the transaction that the delivery does not carry. */
export interface MessageFacts {
  /** The id our Received: header gives the message (`<session>.<transaction>`). */
  queueId: string;
  /** The client's name from reverse DNS, when it has one. */
  clientHostname: string | null;
}

/** What the end-of-DATA policy decided: refuse with this reply, or take the message with these facts. */
export type MessageDecision = { refuse: SmtpReply } | { refuse?: undefined; spam?: PreAcceptance };

/**
 * The spam policy before the 250 (DECISIONS.md section 18), as the SMTP listener calls it.
 * Every method settles (never throws): a check that cannot be made lets the mail through.
 */
export interface PreAcceptancePolicy {
  /** A client connected: lookups about its address may start now, to be ready at RCPT. */
  connected(remoteAddress: string): void;
  /** After a recipient was accepted by the RCPT checks: a refusal, or null to take it. */
  recipient(facts: RecipientFacts): Promise<SmtpReply | null>;
  /** The whole message received, before it is committed and acknowledged. */
  message(delivery: RawDelivery, facts: MessageFacts): Promise<MessageDecision>;
}

/** Counts a refusal by the policy as the verdict `rejected` in /metrics; `check` names what refused. */
export type CountRejected = (check: 'dnsbl' | 'dmarc' | 'rspamd') => void;

/**
 * Whether the From address matches an allow-list entry of one of the tenants (spamcore's
 * `allowedSender`, section 18's allow lists); a DMARC reject is then not enforced.
 */
export type AllowedSender = (tenantIds: number[], fromAddress: string) => Promise<boolean>;
