import { sql, type Kysely } from 'kysely';
import { inboxPlacement, type ClassifyStep, type Delivery, type Placement } from '../inbound/delivery-steps.js';
import { classifyBuiltin, verdictOf, type Candidate, type SenderRules } from './classify.js';
import { senderRules } from './reputation.js';
import { tokenCache, type TokenCache } from './token-cache.js';
import type { SpamFilterMode } from './settings.js';
import type { Screening, SpamVerdict } from '../inbound/spam-verdict.js';

/** The folder junk is filed in, and its keyword (RFC 5788 / Thunderbird). */
export const JUNK_FOLDER = 'Junk';
export const JUNK_KEYWORD = '$Junk';
export const NOT_JUNK_KEYWORD = '$NotJunk';

/** What delivery knows of a message beyond its fields (defined in verdict.ts, below the pipeline's types). */
export type { Screening };

/** Verdicts by result in a stored batch (the storage thread reports them; /metrics counts them). */
export interface VerdictCounts { ham: number; junk: number }

/**
 * The verdicts of candidates (DECISIONS.md section 18): `off` ham with filter "off"; `rspamd` its
 * pre-acceptance verdict when it answered, else the builtin one with RSPAMD_UNAVAILABLE; `builtin`
 * rules, sender policy and the learned model, the token lookups one statement per model.
 */
export async function giveVerdicts(
  trx: Kysely<any>, items: Array<{ candidate: Candidate; screening: Screening }>, mode: SpamFilterMode, rules: SenderRules = senderRules, cache?: TokenCache,
): Promise<SpamVerdict[]> {
  const out: Array<SpamVerdict | null> = items.map(() => null);
  const builtin: number[] = [];
  items.forEach(({ screening }, i) => {
    const rspamd = screening.pre?.rspamd;
    if (mode === 'off') out[i] = verdictOf([], 'off');
    else if (mode === 'rspamd' && rspamd && rspamd !== 'unavailable') out[i] = rspamd;
    else builtin.push(i);
  });
  const given = await classifyBuiltin(trx, builtin.map((i) => items[i].candidate), rules, cache);
  builtin.forEach((i, k) => {
    const v = given[k];
    out[i] = mode === 'rspamd' ? { ...v, reasons: [...v.reasons, { rule: 'RSPAMD_UNAVAILABLE', score: 0 }] } : v;
  });
  return out as SpamVerdict[];
}

/** The candidate of a delivery for one recipient mailbox. */
export const candidateOf = (d: Pick<Delivery, 'message'>, r: { tenantId: number; mailboxId: number }): Candidate => ({
  tenantId: r.tenantId, mailboxId: r.mailboxId, auth: d.message.auth, subject: d.message.subject, fromEmail: d.message.fromEmail,
  headers: d.message.headers, bodyText: d.message.bodyText, bodyHtml: d.message.bodyHtml,
});

/**
 * The classify step of the delivery pipeline (src/mailstore/pipeline.ts, step 4), for a whole
 * batch: a verdict per recipient as its placement: junk to Junk with $Junk (the folder made again,
 * with its special use, if the user deleted it), ham to INBOX; the verdict rides along as `spam`
 * (the file step keeps it, and the trace header is put in front of the bytes as they are read:
 * emails/files.ts). A logged-in owner's own mail is placed in INBOX unclassified. Every candidate
 * of the batch goes to giveVerdicts together: its reads are one statement per batch (per tenant or
 * model), not per message, and the token counts read are kept for later batches while their model's
 * version stays the same (token-cache.ts).
 */
export function spamClassifyStep(mode: SpamFilterMode): ClassifyStep {
  // The token counts this step has read, kept for the next batches while their model is unchanged.
  const cache = tokenCache();
  return async (trx, batch, now) => {
    const out = batch.map(({ recipients }) => recipients.map(inboxPlacement));
    const asked: Array<{ candidate: Candidate; screening: Screening }> = [];
    const at: Array<[number, number]> = [];
    batch.forEach(({ delivery, recipients }, i) => {
      const screening = delivery.screening ?? {};
      if (screening.skip) return;
      recipients.forEach((r, j) => { asked.push({ candidate: candidateOf(delivery, r), screening }); at.push([i, j]); });
    });
    const verdicts = await giveVerdicts(trx, asked, mode, senderRules, cache);
    const junkIn = new Set<number>();
    verdicts.forEach((v, k) => {
      const [i, j] = at[k];
      out[i][j] = v.verdict === 'junk' ? { folder: JUNK_FOLDER, keywords: [JUNK_KEYWORD], spam: v } : { ...inboxPlacement(), spam: v };
      if (v.verdict === 'junk') junkIn.add(batch[i].recipients[j].mailboxId);
    });
    for (const mailboxId of junkIn) {
      await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at) VALUES (${mailboxId}, ${JUNK_FOLDER}, '\\Junk', ${now})
        ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(trx);
    }
    return out;
  };
}

/** Whether a placement's `spam` is a verdict of this filter (other steps may carry something else there). */
export function isSpamVerdict(x: unknown): x is SpamVerdict {
  const v = x as SpamVerdict | null;
  return !!v && typeof v === 'object' && (v.verdict === 'ham' || v.verdict === 'junk') && Array.isArray(v.reasons) && typeof v.score === 'number' && typeof v.threshold === 'number';
}

/**
 * Keeps the verdicts of stored copies (GET /v1/emails `spam`, the trace header), one multi-row
 * insert per few hundred (two parameters a row: well under either backend's limit).
 */
export async function saveVerdicts(trx: Kysely<any>, rows: Array<{ id: number; verdict: SpamVerdict }>): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const part = rows.slice(i, i + 500);
    await trx.insertInto('email_spam').values(part.map((r) => ({ email_id: r.id, verdict: JSON.stringify(r.verdict) }))).execute();
  }
}

/** The addresses a sent message went to: To (every address in the field), Cc and Bcc. */
export function recipientsOfSent(m: { toEmail: string; cc: string[]; bcc: string[]; headers: Record<string, string | string[]> }): string[] {
  const to = m.headers.to;
  const listed = (Array.isArray(to) ? to.join(',') : String(to ?? '')).match(/[^\s<>,;"]+@[^\s<>,;"]+/g) ?? [];
  return [m.toEmail, ...m.cc, ...m.bcc, ...listed].filter((a) => typeof a === 'string' && a.includes('@'));
}
