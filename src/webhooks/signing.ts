import { createHmac } from 'node:crypto';

/**
 * The signing key of a secret: the bytes of the 64-hex text itself, as a receiver gets them with
 * `createHmac('sha256', secret)`. For Standard Webhooks verifiers that means
 * `new Webhook(secret, { format: 'raw' })`, or `new Webhook('whsec_' + base64(secret))`.
 */
const keyOf = (secret: string) => Buffer.from(secret, 'utf8');

/** Lowercase hex HMAC-SHA256 over `<timestamp>.<body>` (the X-Webhook-Signature of SPEC.md). */
export function legacySignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', keyOf(secret)).update(`${timestamp}.`).update(body).digest('hex');
}

/** `v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">` (Standard Webhooks). */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return 'v1,' + createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** What one attempt sends: the exact body and the headers signed over it. */
export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/**
 * `folder` and `spam_verdict` of an email.received payload (DECISIONS.md section 18): junk was
 * filed in Junk, everything else in INBOX, as delivery decided (a later move does not change it).
 */
function receivedFiling(verdictJson: string | null): { folder: string; spam_verdict: 'ham' | 'junk' | null } {
  const verdict = verdictJson ? (JSON.parse(verdictJson) as { verdict: 'ham' | 'junk' }).verdict : null;
  return { folder: verdict === 'junk' ? 'Junk' : 'INBOX', spam_verdict: verdict };
}

/** The User-Agent of every delivery. */
export const USER_AGENT = 'Mailstead-Webhooks/1.0';

/**
 * Builds the body and headers of one attempt. `secrets` lists every secret that signs (the
 * current one first, then one still inside its rotation overlap); each adds a space-separated
 * entry to both signature headers. `timestamp` is the attempt's time in Unix seconds.
 */
export function signedRequest(o: {
  deliveryId: number; event: string; eventAt: number; emailId: number; mailboxId: number; timestamp: number; secrets: string[];
  /** email.received: the copy's spam verdict JSON (null: never classified), which says where it was filed. */
  spamVerdict?: string | null;
}): SignedRequest {
  const data: Record<string, unknown> = { email_id: o.emailId, mailbox_id: o.mailboxId };
  if (o.event === 'email.received') Object.assign(data, receivedFiling(o.spamVerdict ?? null));
  const body = JSON.stringify({ event: o.event, timestamp: Math.floor(o.eventAt / 1000), data });
  const id = String(o.deliveryId);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-id': id,
      'x-webhook-event': o.event,
      'x-webhook-timestamp': String(o.timestamp),
      'x-webhook-signature': o.secrets.map((s) => legacySignature(s, o.timestamp, body)).join(' '),
      'webhook-id': id,
      'webhook-timestamp': String(o.timestamp),
      'webhook-signature': o.secrets.map((s) => standardSignature(s, id, o.timestamp, body)).join(' '),
    },
  };
}
