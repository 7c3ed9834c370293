import { randomUUID } from 'node:crypto';
import type { Core } from '../core.js';
import { tooManyRequests, unprocessable } from '../errors.js';
import type { RecipientResolver } from '../inbound/types.js';
import { decodeBase64 } from '../ingest/normalize.js';
import { MAX_ATTACHMENT_BYTES } from '../ingest/schemas.js';
import type { DailyLedger } from './daily.js';
import { DailyLimitError, SenderFullError, type SubmissionRecipient, type SubmitMessage } from './deliver.js';
import type { SendBody } from './schemas.js';
import { MAX_RECIPIENTS } from './session.js';
import { DAY_MS, submissionStore, type SenderMailbox } from '../mailstore/submission-store.js';

/** Renders a send body into RFC 5322 bytes with nodemailer's MailComposer (Bcc is left out of the header). */
async function render(body: SendBody, messageId: string, now: number): Promise<Buffer> {
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
  let total = 0;
  const attachments = (body.attachments ?? []).map((a, i) => {
    const content = decodeBase64(`attachments[${i}].content`, a.content);
    total += content.length;
    if (total > MAX_ATTACHMENT_BYTES) throw unprocessable(`attachments exceed ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MB in total`);
    return {
      filename: a.filename, contentType: a.content_type, content, cid: a.content_id ?? undefined,
      contentDisposition: (a.disposition === 'inline' ? 'inline' : 'attachment') as 'inline' | 'attachment',
    };
  });
  const inReplyTo = body.in_reply_to ? (body.in_reply_to.startsWith('<') ? body.in_reply_to : `<${body.in_reply_to}>`) : undefined;
  const composer = new MailComposer({
    from: body.from, to: body.to, cc: body.cc ?? undefined, subject: body.subject, messageId, date: new Date(now),
    text: body.text ?? undefined, html: body.html ?? undefined, attachments,
    ...(inReplyTo ? { inReplyTo, references: inReplyTo } : {}),
  });
  return composer.compile().build();
}

/**
 * POST /v1/mail/send (DECISIONS.md section 13): `from` must be a tenant mailbox or an active alias
 * with sender_allowed (422 otherwise); the Sent copy and the daily count go to that mailbox, or for
 * an alias to the first mailbox of its goto. Rendered, the message takes the submission path.
 */
export function createSendService(core: Core, deps: { resolve: RecipientResolver; submit: SubmitMessage; ledger: DailyLedger }) {
  const { db, clock, config } = core;

  /** The mailbox that sends as `from`, or null for an alias whose goto holds no mailbox of ours. */
  async function senderFor(tenantId: number, from: string): Promise<SenderMailbox | null> {
    const mailbox = await submissionStore.mailbox(db, tenantId, from);
    if (mailbox) return mailbox;
    const goto = await submissionStore.sendingAlias(db, tenantId, from);
    if (!goto) throw unprocessable('from must be a mailbox of yours or an active alias that allows sending (sender_allowed)');
    return (await submissionStore.firstMailbox(db, tenantId, goto)) ?? null;
  }

  return {
    /** Sends; resolves with the Message-ID once everything is durably committed. */
    async send(tenantId: number, body: SendBody): Promise<string> {
      const from = body.from.trim().toLowerCase();
      const sender = await senderFor(tenantId, from);
      const fields = { to: body.to, cc: body.cc ?? [], bcc: body.bcc ?? [] };
      const recipients = new Map<string, SubmissionRecipient>();
      for (const [field, list] of Object.entries(fields)) {
        for (const [i, raw] of list.entries()) {
          const address = raw.trim().toLowerCase();
          if (recipients.has(address)) continue;
          if (recipients.size >= MAX_RECIPIENTS) throw unprocessable(`to, cc and bcc name more than ${MAX_RECIPIENTS} recipients together`);
          const resolution = await deps.resolve(address);
          if (resolution.kind === 'unknown') throw unprocessable(`${field}[${i}] ${JSON.stringify(raw)} is not a mailbox or alias of its domain`);
          recipients.set(address, { address, resolution });
        }
      }
      const now = clock.now();
      const overLimit = () => tooManyRequests(`daily sending limit of ${config.submissionDailyLimit} recipients reached for ${sender!.address}`, DAY_MS / 1000 / 24);
      // Checked before rendering; the submission path reserves the count (against concurrent sends).
      if (sender && (await deps.ledger.used(sender.id)) + recipients.size > config.submissionDailyLimit) throw overLimit();
      const fromDomain = from.slice(from.lastIndexOf('@') + 1);
      const messageId = `<${randomUUID()}@${fromDomain}>`;
      const raw = await render(body, messageId, now);
      try {
        await deps.submit({
          tenantId, sender, mailFrom: from, fromDomain, recipients: [...recipients.values()], raw,
          trace: { remoteAddress: '127.0.0.1', heloName: config.hostname, protocol: 'HTTP', tls: false },
        });
      } catch (err) {
        if (err instanceof DailyLimitError) throw overLimit();
        if (err instanceof SenderFullError) throw unprocessable(`the mailbox ${sender!.address} is over its quota: no room for the Sent copy`);
        throw err;
      }
      return messageId;
    },
  };
}
export type SendService = ReturnType<typeof createSendService>;
