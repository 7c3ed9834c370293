import { sql, type Kysely } from 'kysely';
import { fromAuthenticates } from './authenticated.js';
import type { Candidate } from './classify.js';
import { listReasons } from './lists.js';
import type { SpamReason } from '../inbound/spam-verdict.js';

/** Points of a known correspondent: weighs against a learned spam guess, not against a block entry. */
const KNOWN_POINTS = -4;

/** Records addresses as known correspondents of a mailbox (it wrote to them, or rescued their mail from Junk). */
export async function rememberCorrespondents(db: Kysely<any>, mailboxId: number, addresses: string[], now: number): Promise<void> {
  const list = [...new Set(addresses.map((a) => a.trim().toLowerCase()).filter((a) => a.includes('@')))];
  for (const address of list) {
    await sql`INSERT INTO spam_correspondents (mailbox_id, address, created_at) VALUES (${mailboxId}, ${address}, ${now})
      ON CONFLICT (mailbox_id, address) DO NOTHING`.execute(db);
  }
}

/** KNOWN_CORRESPONDENT for candidates whose From the mailbox knows, when the From domain authenticates. */
export async function correspondentReasons(db: Kysely<any>, candidates: Candidate[]): Promise<SpamReason[][]> {
  const asked = candidates.filter((c) => fromAuthenticates(c.auth, c.fromEmail));
  if (asked.length === 0) return candidates.map(() => []);
  const r = await sql<{ mailbox_id: number; address: string }>`SELECT mailbox_id, address FROM spam_correspondents
    WHERE mailbox_id IN (${sql.join([...new Set(asked.map((c) => c.mailboxId))])})
      AND address IN (${sql.join([...new Set(asked.map((c) => c.fromEmail.toLowerCase()))])})`.execute(db);
  const known = new Set(r.rows.map((x) => `${Number(x.mailbox_id)} ${x.address}`));
  return candidates.map((c) => (fromAuthenticates(c.auth, c.fromEmail) && known.has(`${c.mailboxId} ${c.fromEmail.toLowerCase()}`)
    ? [{ rule: 'KNOWN_CORRESPONDENT', score: KNOWN_POINTS, detail: `${c.fromEmail.toLowerCase()} is a known correspondent of this mailbox` }]
    : []));
}

/** Every sender rule of the builtin filter: lists, then reputation. */
export async function senderRules(db: Kysely<any>, candidates: Candidate[]): Promise<SpamReason[][]> {
  const lists = await listReasons(db, candidates);
  const known = await correspondentReasons(db, candidates);
  // A block entry decides alone: no reputation is counted against it.
  return candidates.map((_, i) => (lists[i].some((r) => r.rule === 'BLOCKLIST') ? lists[i] : [...lists[i], ...known[i]]));
}
