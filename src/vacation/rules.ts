import { addressesIn } from './headers.js';

/**
 * Whether an automatic reply may go to the sender of a message (RFC 3834 section 2, RFC 5230
 * section 4.5, DECISIONS.md section 19): never to the null sender, MAILER-DAEMON, owner-* or
 * *-request senders, mail marked Auto-Submitted (other than "no"), list mail (List-Id,
 * List-Unsubscribe), Precedence bulk/list/junk, junk verdicts, or mail that does not name the
 * mailbox (or one of `addresses`) in To or Cc. Null means a reply may go; else the reason why not.
 */
export function noReplyReason(o: {
  sender: string | null;
  fields: Map<string, string[]>;
  ownAddresses: readonly string[];
  junk: boolean;
}): string | null {
  if (!o.sender) return 'null sender';
  const sender = o.sender.toLowerCase();
  const local = sender.slice(0, sender.lastIndexOf('@'));
  if (local === 'mailer-daemon' || local.startsWith('owner-') || local.endsWith('-request')) return 'sender is a list or a daemon';
  if (o.ownAddresses.some((a) => a.toLowerCase() === sender)) return 'sender is the mailbox itself';
  const auto = o.fields.get('auto-submitted');
  if (auto && auto.some((v) => v.trim().split(/[\s;(]/)[0]!.toLowerCase() !== 'no')) return 'auto-submitted';
  if (o.fields.has('list-id') || o.fields.has('list-unsubscribe')) return 'list mail';
  const precedence = o.fields.get('precedence');
  if (precedence && precedence.some((v) => /^(bulk|list|junk)$/i.test(v.trim()))) return 'bulk precedence';
  if (o.junk) return 'junk';
  const named = new Set(addressesIn([...(o.fields.get('to') ?? []), ...(o.fields.get('cc') ?? [])]));
  if (!o.ownAddresses.some((a) => named.has(a.toLowerCase()))) return 'mailbox not in To or Cc';
  return null;
}
