import { sql, type Kysely } from 'kysely';
import { addressProblem, normalizeAddress } from '../message/address.js';
import { hostnameProblem, normalizeHostname } from '../message/hostname.js';
import { unprocessable } from '../errors.js';
import { domainOfAddress, fromAuthenticates } from './authenticated.js';
import type { Candidate } from './classify.js';
import type { SpamReason } from '../inbound/spam-verdict.js';

/** An allow or block entry as the API shows it. */
export interface SpamListEntry { id: number; kind: 'allow' | 'block'; pattern: string; mailbox: string | null }

/** Points of list entries: enough to decide on their own, whatever else was said. */
const ALLOW_POINTS = -100;
const BLOCK_POINTS = 100;

/** The stored form of a pattern, or a 422: `user@domain` or `@domain` (matching its sub-domains too). */
export function normalizePattern(pattern: string): string {
  const p = pattern.trim();
  if (p.startsWith('@')) {
    const problem = hostnameProblem(p.slice(1));
    if (problem) throw unprocessable(`pattern: the domain ${problem}`);
    return `@${normalizeHostname(p.slice(1))}`;
  }
  const problem = addressProblem(p);
  if (problem) throw unprocessable(`pattern ${problem} (or @domain)`);
  return normalizeAddress(p);
}

/** Whether a pattern matches an address: the address itself, or `@domain` for that domain and its sub-domains. */
export function patternMatches(pattern: string, address: string): boolean {
  const a = address.trim().toLowerCase();
  if (!pattern.startsWith('@')) return pattern === a;
  const domain = pattern.slice(1);
  const d = domainOfAddress(a);
  return d === domain || d.endsWith(`.${domain}`);
}

type Row = { id: number; tenant_id: number; mailbox_id: number | null; kind: 'allow' | 'block'; pattern: string; address: string | null };

/** Entries of tenants (their own and their mailboxes'), with each mailbox's address. */
async function entriesOf(db: Kysely<any>, tenantIds: number[]): Promise<Row[]> {
  if (tenantIds.length === 0) return [];
  const r = await sql<Row>`SELECT l.id, l.tenant_id, l.mailbox_id, l.kind, l.pattern, m.address FROM spam_lists l
    LEFT JOIN mailboxes m ON m.id = l.mailbox_id WHERE l.tenant_id IN (${sql.join(tenantIds)}) ORDER BY l.id`.execute(db);
  return r.rows.map((x) => ({ ...x, id: Number(x.id), tenant_id: Number(x.tenant_id), mailbox_id: x.mailbox_id === null ? null : Number(x.mailbox_id) }));
}

/** The allow and block lists (DECISIONS.md section 18): list service and the sender rules that classification applies. */
export const spamLists = {
  async list(db: Kysely<any>, tenantId: number): Promise<SpamListEntry[]> {
    return (await entriesOf(db, [tenantId])).map((r) => ({ id: r.id, kind: r.kind, pattern: r.pattern, mailbox: r.address }));
  },

  async add(db: Kysely<any>, tenantId: number, input: { kind: 'allow' | 'block'; pattern: string; mailbox?: string }, now: number): Promise<SpamListEntry> {
    const pattern = normalizePattern(input.pattern);
    let mailboxId: number | null = null;
    let mailbox: string | null = null;
    if (input.mailbox !== undefined) {
      const problem = addressProblem(input.mailbox);
      if (problem) throw unprocessable(`mailbox ${problem}`);
      mailbox = normalizeAddress(input.mailbox);
      const m = await sql<{ id: number }>`SELECT id FROM mailboxes WHERE address = ${mailbox} AND tenant_id = ${tenantId}`.execute(db);
      if (!m.rows[0]) throw unprocessable('mailbox is not a mailbox of this account');
      mailboxId = Number(m.rows[0].id);
    }
    const r = await sql<{ id: number }>`INSERT INTO spam_lists (tenant_id, mailbox_id, kind, pattern, created_at)
      VALUES (${tenantId}, ${mailboxId}, ${input.kind}, ${pattern}, ${now}) RETURNING id`.execute(db);
    return { id: Number(r.rows[0].id), kind: input.kind, pattern, mailbox };
  },

  /** Removes an entry of the tenant; false when it has none by that id. */
  async remove(db: Kysely<any>, tenantId: number, id: number): Promise<boolean> {
    const r = await sql`DELETE FROM spam_lists WHERE id = ${id} AND tenant_id = ${tenantId}`.execute(db);
    return Number(r.numAffectedRows ?? 0) > 0;
  },
};

/**
 * Whether an allow entry of these tenants (any scope) names `fromAddress`: for the SMTP side's DMARC
 * p=reject exception (DECISIONS.md section 18), which refuses before knowing the mailbox.
 */
export async function allowedSender(db: Kysely<any>, tenantIds: number[], fromAddress: string): Promise<boolean> {
  return (await entriesOf(db, tenantIds)).some((r) => r.kind === 'allow' && patternMatches(r.pattern, fromAddress));
}

/** The list reasons of each candidate: its tenant's entries and its own mailbox's. */
export async function listReasons(db: Kysely<any>, candidates: Candidate[]): Promise<SpamReason[][]> {
  const entries = await entriesOf(db, [...new Set(candidates.map((c) => c.tenantId))]);
  if (entries.length === 0) return candidates.map(() => []);
  return candidates.map((c) => {
    const mine = entries.filter((e) => e.tenant_id === c.tenantId && (e.mailbox_id === null || e.mailbox_id === c.mailboxId) && patternMatches(e.pattern, c.fromEmail));
    const out: SpamReason[] = [];
    const block = mine.find((e) => e.kind === 'block');
    const allow = mine.find((e) => e.kind === 'allow');
    if (block) out.push({ rule: 'BLOCKLIST', score: BLOCK_POINTS, detail: `${block.pattern} is on the block list` });
    else if (allow) {
      // Allow only counts for a From domain that authenticates: a forged From gains nothing.
      if (fromAuthenticates(c.auth, c.fromEmail)) out.push({ rule: 'ALLOWLIST', score: ALLOW_POINTS, detail: `${allow.pattern} is on the allow list` });
      else out.push({ rule: 'ALLOWLIST_UNAUTHENTICATED', score: 0, detail: `${allow.pattern} is on the allow list, but the From domain did not authenticate` });
    }
    return out;
  });
}
