import type { AuthResults } from '../ingest/types.js';

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
