import type { Envelope } from '../inbound/message.js';
import type { PreAcceptance, Screening } from '../inbound/spam-verdict.js';

/**
 * What the classify step takes from a queued SMTP envelope: the SMTP side's pre-acceptance result
 * (`spam`, when spam policy ran before the 250), and whether a logged-in owner sent it
 * (submission: not classified).
 */
export function screeningOf(envelope: Omit<Envelope, 'recipients'>): Screening {
  const pre = (envelope as Envelope & { spam?: PreAcceptance }).spam;
  return { ...(pre ? { pre } : {}), ...(envelope.authenticated ? { skip: true } : {}) };
}
