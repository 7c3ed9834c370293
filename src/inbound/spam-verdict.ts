import type { AuthResults } from '../message/auth-results.js';

/** One reason that moved a spam score (DECISIONS.md section 18), named in capitals. */
export interface SpamReason { rule: string; score: number; detail?: string }

/** A spam verdict as `GET /v1/emails/{email}` shows it under `spam`. */
export interface SpamVerdict {
  verdict: 'ham' | 'junk';
  score: number;
  threshold: number;
  filter: 'builtin' | 'rspamd' | 'off';
  reasons: SpamReason[];
}

/**
 * What spam policy decided before the 250, carried with the envelope to the classify step:
 * rspamd's verdict, or 'unavailable' when rspamd failed or took over 5 s (the builtin verdict
 * then applies with reason RSPAMD_UNAVAILABLE); and the SPF, DKIM and DMARC results of a message
 * verified before the 250 (DMARC p=reject), which the parser keeps instead of verifying again.
 */
export interface PreAcceptance {
  rspamd?: SpamVerdict | 'unavailable';
  auth?: AuthResults;
}

/**
 * What delivery knows of a message beyond its fields (carried on its Delivery from the envelope,
 * read by the classify step, spam/filing.ts). Here, beside the verdict types, so that the
 * pipeline's types (inbound/delivery-steps.ts) need nothing of the filter that implements its step.
 */
export interface Screening {
  /** The SMTP side's pre-acceptance result (rspamd's verdict, or 'unavailable'; verified authentication). */
  pre?: PreAcceptance;
  /** Mail a logged-in owner sent (submission) or this server made (a DSN): not classified. */
  skip?: boolean;
}
