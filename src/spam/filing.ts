import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import { folderStore } from '../emails/folder-store.js';
import type { Copy, Created } from '../emails/writer.js';
import { classifyBuiltin, verdictOf, type Candidate, type SenderRules } from './classify.js';
import { spamStatusField } from './header.js';
import { senderRules } from './reputation.js';
import type { SpamFilterMode } from './settings.js';
import type { PreAcceptance, SpamVerdict } from './verdict.js';

/** The folder junk is filed in, and its keyword (RFC 5788 / Thunderbird). */
export const JUNK_FOLDER = 'Junk';
export const JUNK_KEYWORD = '$Junk';
export const NOT_JUNK_KEYWORD = '$NotJunk';

/** What delivery knows of a copy's message beyond its fields: null for copies never classified (Sent copies, ...). */
export interface Screening {
  /** The SMTP side's pre-acceptance result (rspamd's verdict, or 'unavailable'). */
  pre?: PreAcceptance;
}

/** Verdicts by result in a stored batch (the storage thread reports them; /metrics counts them). */
export interface VerdictCounts { ham: number; junk: number }

/**
 * The classify step of delivery (DECISIONS.md section 18), for the copies of one storage batch,
 * inside its transaction. Before the copies are written it gives each classified copy its verdict
 * and counts the trace header's bytes in its size; `file` then, once the copies exist, keeps the
 * verdicts and moves junk to the mailbox's Junk folder with $Junk. Copies with a null screening
 * (filed Sent copies) are left alone.
 */
export async function classifyCopies(
  trx: Kysely<any>, copies: Copy[], screenings: Array<Screening | null>, deps: { senderRules?: SenderRules; mode?: SpamFilterMode } = {},
) {
  const mode = deps.mode ?? 'builtin';
  const verdicts: Array<SpamVerdict | null> = copies.map(() => null);
  const builtin: number[] = [];
  copies.forEach((c, i) => {
    const s = screenings[i];
    if (!s) return;
    const rspamd = s.pre?.rspamd;
    if (mode === 'off') verdicts[i] = verdictOf([], 'off');
    else if (mode === 'rspamd' && rspamd && rspamd !== 'unavailable') verdicts[i] = rspamd;
    else builtin.push(i);
  });
  const candidates: Candidate[] = builtin.map((i) => {
    const { tenantId, mailboxId, message: m } = copies[i];
    return { tenantId, mailboxId, auth: m.auth, subject: m.subject, fromEmail: m.fromEmail, headers: m.headers, bodyText: m.bodyText, bodyHtml: m.bodyHtml };
  });
  const given = await classifyBuiltin(trx, candidates, deps.senderRules ?? senderRules);
  builtin.forEach((i, k) => {
    const v = given[k];
    // rspamd was asked and did not answer: the builtin verdict applies, and says why.
    verdicts[i] = mode === 'rspamd' ? { ...v, reasons: [...v.reasons, { rule: 'RSPAMD_UNAVAILABLE', score: 0 }] } : v;
  });
  // The trace header is part of the stored message: its size, the quota and IMAP's RFC822.SIZE count it.
  verdicts.forEach((v, i) => {
    if (!v) return;
    const bytes = spamStatusField(v).length;
    copies[i] = { ...copies[i], size: copies[i].size + bytes, prefixBytes: bytes };
  });

  return {
    verdicts,
    /** Keeps the verdicts of the created copies (aligned with `copies`) and files junk; answers the counts. */
    async file(created: Array<Created | undefined>, now: number): Promise<VerdictCounts> {
      const counts: VerdictCounts = { ham: 0, junk: 0 };
      const rows: Array<{ id: number; verdict: string }> = [];
      const junk = new Map<number, number[]>();
      created.forEach((c, i) => {
        const v = verdicts[i];
        if (!c || !v) return;
        counts[v.verdict]++;
        rows.push({ id: c.id, verdict: JSON.stringify(v) });
        if (v.verdict === 'junk') junk.set(c.mailboxId, [...(junk.get(c.mailboxId) ?? []), c.id]);
      });
      await saveVerdicts(trx, rows);
      if (junk.size > 0) await moveToJunk(trx, junk, now);
      return counts;
    },
  };
}

/** Verdict rows of created copies, one statement per few hundred. */
async function saveVerdicts(trx: Kysely<any>, rows: Array<{ id: number; verdict: string }>): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const part = rows.slice(i, i + 500);
    if (dialectOf(trx) === 'postgres') {
      await sql`INSERT INTO email_spam (email_id, verdict) SELECT * FROM unnest(${part.map((r) => r.id)}::bigint[], ${part.map((r) => r.verdict)}::text[])`.execute(trx);
    } else {
      await sql`INSERT INTO email_spam (email_id, verdict) SELECT j.value ->> 0, j.value ->> 1 FROM json_each(${JSON.stringify(part.map((r) => [r.id, r.verdict]))}) AS j`.execute(trx);
    }
  }
}

/**
 * Files junk copies in their mailbox's Junk folder (made, with its special use, if the user deleted
 * it) under new UIDs there, with $Junk. Same transaction as the copies: no client ever sees them in INBOX.
 */
async function moveToJunk(trx: Kysely<any>, byMailbox: Map<number, number[]>, now: number): Promise<void> {
  const counts = new Map([...byMailbox].map(([m, ids]) => [m, ids.length]));
  let first = await folderStore.reserveUids(trx, JUNK_FOLDER, counts);
  const missing = [...counts.keys()].filter((m) => !first.has(m));
  if (missing.length > 0) {
    for (const m of missing) {
      await sql`INSERT INTO folders (mailbox_id, name, special_use, created_at) VALUES (${m}, ${JUNK_FOLDER}, '\\Junk', ${now})
        ON CONFLICT (mailbox_id, name) DO NOTHING`.execute(trx);
    }
    first = new Map([...first, ...(await folderStore.reserveUids(trx, JUNK_FOLDER, new Map(missing.map((m) => [m, counts.get(m)!]))))]);
  }
  for (const [mailboxId, ids] of byMailbox) {
    let uid = first.get(mailboxId)!;
    for (const id of ids) {
      await sql`UPDATE emails SET folder = ${JUNK_FOLDER}, uid = ${uid++}, flags = ${JUNK_KEYWORD} WHERE id = ${id}`.execute(trx);
    }
  }
}
