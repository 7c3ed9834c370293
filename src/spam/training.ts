import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { spamModelStore, TENANT_MODEL } from './model-store.js';
import { featureIds } from './tokens.js';

/** A class a message is trained as. */
export type SpamClass = 'spam' | 'ham';

/** Messages a user judged, as a trainer is told of them (after the change committed). */
export interface TrainingEvent {
  tenantId: number;
  mailboxId: number;
  emailIds: number[];
  cls: SpamClass;
}

/**
 * Something else that learns from the same judgements: the rspamd controller (/learnspam,
 * /learnham), installed by the rspamd adapter with `training.add`. Told after the commit; its
 * failures are logged, never the user's.
 */
export interface SpamTrainer {
  name: string;
  learn(event: TrainingEvent): Promise<void>;
}

/** Read of the stored fields a message is tokenised from (the same fields delivery classified). */
async function samples(db: Kysely<any>, emailIds: number[]) {
  if (emailIds.length === 0) return [];
  const r = await sql<{ id: number; tenant_id: number; mailbox_id: number; message_id: string; subject: string; from_email: string; headers: string; body_text: string | null; body_html: string | null }>`
    SELECT e.id, e.tenant_id, e.mailbox_id, e.message_id, e.subject, e.from_email, c.headers, c.body_text, c.body_html
    FROM emails e JOIN email_contents c ON c.email_id = e.id WHERE e.id IN (${sql.join(emailIds)}) AND e.deleted_at IS NULL`.execute(db);
  return r.rows;
}

/**
 * Trains the builtin filter on messages (inside the caller's transaction): their features join the
 * spam or ham counts of their mailbox's model and their tenant's. A message is known by its mailbox
 * and Message-ID (an IMAP copy is the same message); trained before the other way, its earlier
 * contribution is taken away first; trained the same way again, nothing changes. The batch's
 * features are summed first, so each model is written once per batch, not once per message.
 */
export async function trainBuiltin(db: Kysely<any>, emailIds: number[], cls: SpamClass, now: number): Promise<number> {
  const byMailbox = new Map<number, Awaited<ReturnType<typeof samples>>>();
  for (const s of await samples(db, emailIds)) byMailbox.set(Number(s.mailbox_id), [...(byMailbox.get(Number(s.mailbox_id)) ?? []), s]);
  let trained = 0;
  for (const [mailboxId, rows] of byMailbox) {
    const tenantId = Number(rows[0].tenant_id);
    const before = await spamModelStore.trainedAsMany(db, mailboxId, rows.map((s) => s.message_id));
    const deltas = new Map<number, [number, number]>();
    let spam = 0;
    let ham = 0;
    const done = new Set<string>();
    for (const s of rows) {
      const was = before.get(s.message_id);
      if (was === cls || done.has(s.message_id)) continue;
      done.add(s.message_id);
      const ds = (cls === 'spam' ? 1 : 0) - (was === 'spam' ? 1 : 0);
      const dh = (cls === 'ham' ? 1 : 0) - (was === 'ham' ? 1 : 0);
      spam += ds;
      ham += dh;
      for (const t of featureIds({ subject: s.subject, fromEmail: s.from_email, headers: JSON.parse(s.headers), bodyText: s.body_text, bodyHtml: s.body_html })) {
        const d = deltas.get(t) ?? [0, 0];
        d[0] += ds;
        d[1] += dh;
        deltas.set(t, d);
      }
      await spamModelStore.saveTrained(db, { mailboxId, messageId: s.message_id, tenantId, cls, at: now });
      trained++;
    }
    if (done.size === 0) continue;
    for (const model of [mailboxId, TENANT_MODEL]) await spamModelStore.addDeltas(db, tenantId, model, deltas, spam, ham);
  }
  return trained;
}

/**
 * Training as the storage layer runs it (emails/folders/: moves, copies, appends, flag
 * changes; the junk and not-junk API): the builtin filter inside the change's transaction, then
 * every added trainer once it committed.
 */
export function createSpamTraining(deps: { clock: Clock; logger?: Logger }) {
  const trainers: SpamTrainer[] = [];
  return {
    add(trainer: SpamTrainer): void { trainers.push(trainer); },
    /** Inside the transaction that made the change. */
    train: (trx: Kysely<any>, emailIds: number[], cls: SpamClass) => trainBuiltin(trx, emailIds, cls, deps.clock.now()),
    /** After it committed: the other trainers (never awaited by the user's command). */
    committed(event: TrainingEvent): void {
      if (event.emailIds.length === 0) return;
      for (const t of trainers) {
        t.learn(event).catch((err) => deps.logger?.warn({ err, trainer: t.name }, 'a spam trainer failed'));
      }
    },
  };
}
export type SpamTraining = ReturnType<typeof createSpamTraining>;

/** Which way a move trains (DECISIONS.md section 18): into Junk is spam; out of Junk to anything but Trash is ham. */
export function moveTraining(from: string, to: string): SpamClass | null {
  if (to === 'Junk' && from !== 'Junk') return 'spam';
  if (from === 'Junk' && to !== 'Junk' && to !== 'Trash') return 'ham';
  return null;
}

/** Which way added keywords train: $Junk spam, $NotJunk ham (both at once: nothing). */
export function flagTraining(before: string, after: string): SpamClass | null {
  const had = new Set(before.toLowerCase().split(' '));
  const now = new Set(after.toLowerCase().split(' '));
  const junk = now.has('$junk') && !had.has('$junk');
  const notJunk = now.has('$notjunk') && !had.has('$notjunk');
  if (junk && !notJunk) return 'spam';
  if (notJunk && !junk) return 'ham';
  return null;
}
