import type { Kysely } from 'kysely';
import type { AuthResults } from '../inbound/types.js';
import { dmarcQuarantine, fromAuthenticates, fromForged } from './authenticated.js';
import { combineCounts } from './chi2.js';
import { spamModelStore, TENANT_MODEL, type ModelTotals } from './model-store.js';
import type { TokenCache } from './token-cache.js';
import { TokenTable } from './token-table.js';
import { classifyIds, type TokenSource } from './tokens.js';
import type { SpamReason, SpamVerdict } from '../inbound/spam-verdict.js';

/** Score at which a message is junk (SpamAssassin's scale, so the trace header reads as usual). */
export const THRESHOLD = 5;
/** Messages of each class a model needs before it is used: below, the tenant's, else rules alone. */
export const MIN_TRAINED = 10;
/**
 * Bayes probability at and above which the model alone makes a message junk: bogofilter's default
 * spam_cutoff. Chi-square combining answers near 0 or 1 when the evidence agrees and in between when
 * it does not; like bogofilter and SpamBayes we count that "unsure" middle as ham, because a missed
 * spam costs a delete and a misfiled ham can cost a lost message. (At 0.5 the SpamAssassin corpus's
 * hard ham, newsletters and marketing people asked for, went to Junk one time in eight.)
 */
export const SPAM_CUTOFF = 0.99;

/**
 * Points of a Bayes probability: from 0 at 0.5 to just under THRESHOLD below SPAM_CUTOFF (unsure:
 * junk only with other evidence, such as failed authentication), THRESHOLD to twice it from the
 * cutoff up; below 0.5 down to minus THRESHOLD.
 */
export function bayesPoints(p: number): number {
  if (p >= SPAM_CUTOFF) return THRESHOLD + THRESHOLD * (p - SPAM_CUTOFF) / (1 - SPAM_CUTOFF);
  if (p > 0.5) return Math.min(THRESHOLD - 0.01, THRESHOLD * (p - 0.5) / (SPAM_CUTOFF - 0.5));
  if (p < 0.5) return -THRESHOLD * (0.5 - p) / 0.5;
  return 0;
}

/** A message for one mailbox, as the filter sees it. */
export interface Candidate extends TokenSource {
  tenantId: number;
  mailboxId: number;
  auth: AuthResults | null;
}

/**
 * What the sender policy (allow and block lists, known correspondents) says of a candidate: reasons
 * that apply before and beside the learned model. Supplied by lists.ts and reputation.ts.
 */
export type SenderRules = (db: Kysely<any>, candidates: Candidate[]) => Promise<SpamReason[][]>;

const round = (n: number) => Math.round(n * 100) / 100;

/** A verdict from its reasons: the score is their sum, junk iff it reaches the threshold. */
export function verdictOf(reasons: SpamReason[], filter: SpamVerdict['filter'] = 'builtin', threshold = THRESHOLD): SpamVerdict {
  const score = round(reasons.reduce((s, r) => s + r.score, 0));
  return { verdict: score >= threshold ? 'junk' : 'ham', score, threshold, filter, reasons };
}

/** The conservative rules: only authentication evidence, never enough alone to make ordinary mail junk. */
function ruleReasons(c: Candidate): SpamReason[] {
  const out: SpamReason[] = [];
  const auth = c.auth;
  if (dmarcQuarantine(auth)) out.push({ rule: 'DMARC_QUARANTINE', score: THRESHOLD, detail: 'DMARC failed under p=quarantine' });
  else if (auth?.dmarc?.result === 'fail') out.push({ rule: 'DMARC_FAIL', score: 1, detail: 'DMARC failed (the domain publishes no enforcing policy)' });
  if (auth?.spf?.result === 'fail') out.push({ rule: 'SPF_FAIL', score: 0.5 });
  if (auth && fromAuthenticates(auth, c.fromEmail)) out.push({ rule: 'FROM_AUTHENTICATED', score: -0.1 });
  return out;
}

/**
 * Which model decides each candidate: its mailbox's once trained enough in both classes, else its
 * tenant's, else none (rules alone: an untrained mailbox never misfiles on a guess).
 */
async function modelsOf(db: Kysely<any>, candidates: Candidate[]): Promise<Array<({ model: number } & ModelTotals) | null>> {
  const byTenant = new Map<number, number[]>();
  for (const c of candidates) {
    const boxes = byTenant.get(c.tenantId);
    if (boxes) boxes.push(c.mailboxId); else byTenant.set(c.tenantId, [c.mailboxId]);
  }
  const totals = new Map<number, Map<number, ModelTotals>>();
  for (const [tenantId, boxes] of byTenant) totals.set(tenantId, await spamModelStore.totals(db, tenantId, [...new Set(boxes)]));
  const enough = (t: ModelTotals | undefined) => t !== undefined && t.spam >= MIN_TRAINED && t.ham >= MIN_TRAINED;
  return candidates.map((c) => {
    const t = totals.get(c.tenantId)!;
    const own = t.get(c.mailboxId);
    if (enough(own)) return { model: c.mailboxId, ...own! };
    const shared = t.get(TENANT_MODEL);
    if (enough(shared)) return { model: TENANT_MODEL, ...shared! };
    return null;
  });
}

/** The Bayes reason of a probability. */
function bayesReason(probability: number, clues: number, model: { model: number; spam: number; ham: number }): SpamReason {
  const points = probability >= SPAM_CUTOFF ? Math.max(THRESHOLD, round(bayesPoints(probability))) : round(bayesPoints(probability));
  const which = model.model === TENANT_MODEL ? 'tenant model' : 'mailbox model';
  return {
    rule: probability >= SPAM_CUTOFF ? 'BAYES_SPAM' : probability > 0.5 ? 'BAYES_UNSURE' : 'BAYES_HAM', score: points,
    detail: `probability ${probability.toFixed(3)} from ${clues} features (${which}: ${model.spam} spam, ${model.ham} ham trained)`,
  };
}

/**
 * The builtin filter's verdicts for a batch of candidates: rules, sender policy, and the learned
 * model where one is trained. The token lookups of the batch are one statement per model, of the
 * tokens `cache` does not already hold for the model's current version.
 */
export async function classifyBuiltin(db: Kysely<any>, candidates: Candidate[], senderRules?: SenderRules, cache?: TokenCache): Promise<SpamVerdict[]> {
  if (candidates.length === 0) return [];
  const models = await modelsOf(db, candidates);
  const tokens = candidates.map((c, i) => (models[i] ? classifyIds(c, !fromForged(c.auth)) : []));
  // Per model of the batch: its kept counts (or fresh ones without a cache), then one read of the tokens missing from them.
  const tables = new Map<string, { table: TokenTable; tenantId: number; model: number; missing: Set<number> }>();
  const tableOf = (i: number) => {
    const key = `${candidates[i].tenantId}:${models[i]!.model}`;
    let entry = tables.get(key);
    if (!entry) {
      entry = { table: cache ? cache.counts(key, models[i]!.version) : new TokenTable(), tenantId: candidates[i].tenantId, model: models[i]!.model, missing: new Set() };
      tables.set(key, entry);
    }
    return entry;
  };
  candidates.forEach((_, i) => {
    if (!models[i]) return;
    const { table, missing } = tableOf(i);
    const list = tokens[i];
    for (let j = 0; j < list.length; j++) if (table.find(list[j]) < 0) missing.add(list[j]);
  });
  for (const [key, { table, tenantId, model, missing }] of tables) {
    if (missing.size === 0) continue;
    const got = await spamModelStore.counts(db, tenantId, model, [...missing]);
    for (const t of missing) table.set(t, got.get(t) ?? null);
    cache?.grew(key, missing.size);
  }
  const sender = senderRules ? await senderRules(db, candidates) : candidates.map(() => []);
  // The counts of one message's known features, reused from message to message.
  const longest = tokens.reduce((n, t) => Math.max(n, t.length), 0);
  const spamSeen = new Int32Array(longest);
  const hamSeen = new Int32Array(longest);
  return candidates.map((c, i) => {
    const reasons = [...sender[i], ...ruleReasons(c)];
    const m = models[i];
    if (m) {
      const { table } = tableOf(i);
      const list = tokens[i];
      let n = 0;
      for (let j = 0; j < list.length; j++) {
        const slot = table.find(list[j]);
        if (slot < 0 || !table.known(slot)) continue;
        spamSeen[n] = table.spam(slot);
        hamSeen[n] = table.ham(slot);
        n++;
      }
      const { probability, clues } = combineCounts(spamSeen, hamSeen, n, m.spam, m.ham);
      if (clues > 0) reasons.push(bayesReason(probability, clues, m));
    }
    return verdictOf(reasons);
  });
}
