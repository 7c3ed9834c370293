/** A (mailbox, message_id) pair whose uniqueness ingest checks. */
export interface MessageKey {
  mailboxId: number;
  messageId: string;
}

/** The key of a pair in a Set. */
export const messageKey = (k: MessageKey) => `${k.mailboxId}\u0000${k.messageId}`;
