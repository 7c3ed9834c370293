/**
 * The delivery pipeline: how a message received becomes stored copies, queued forwards and replies.
 * One sequence of named steps; the first three run before the batch transaction, the rest inside it
 * (deliverBatch, one transaction per batch: a crash rolls all of it back and the batch is redone).
 *
 *  1. accept        ingest/accept.ts (SQLite: acceptance journal, group commit on the storage thread),
 *                   ingest/postgres/accept.ts (PostgreSQL: group commit in the database):
 *                     acceptRaw(delivery: RawDelivery): Promise<void>            SMTP, before the 250
 *                     acceptMessage(tenantId, message: InboundMessage): Promise<void>   POST /v1/mail/inbound
 *  2. parse         RawParser (inbound/types.ts), run by the ingest worker in parser threads:
 *                     (raw: Buffer | { path }, envelope) => Promise<EncodedMessage>
 *  3. authenticate  inside the parser (mailauth): SPF, DKIM, DMARC -> StoredMessage.auth
 *                   (null for API mail and authenticated submission)
 *  -- in the batch transaction (deliverBatch), per message (Delivery) and its recipients (Recipient[]):
 *  4. classify      ClassifyStep  (trx, delivery, recipients, now) => Promise<Placement[]>        classify.ts
 *  5. filter        FilterStep    (trx, delivery, recipients, classified: Placement[], now)
 *                     => Promise<{ placements: Array<Placement | null>, effects: { redirects, replies } }>   filter.ts
 *                   Placement = { folder (default 'INBOX'), keywords: string[], prepend?: string, spam?: unknown };
 *                   null stores no copy for that recipient (discard). Types in inbound/delivery-steps.ts.
 *  6. file          fileCopies: a copy per placement (writer.storeCopies), plus filed Sent copies (not classified
 *                   nor filtered: DECISIONS.md sections 18 and 19), events, quota usage.
 *  7. forward       forwardRows (forwards.ts) of alias forwards, and the filter's redirects: outbound items.
 *  8. reply         the filter's replies: outbound items from <> with their own bytes.
 *  then             submissions' external recipients queued, queue rows finished, failures noted.
 */
import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Copy, Created, EmailWriter } from './writer.js';
import type { Failure, StoreInput, StoreResult } from './commits.js';
import type { StoredMessage, Target } from '../inbound/message.js';
import { decodeMessage } from '../inbound/encoded-message.js';
import { setAside } from './set-aside.js';
import type { IngestStore } from './inbound-store.js';
import type { FiledCopy } from '../inbound/types.js';
import { forwardRows } from './forwards.js';
import type { OutboundTable } from '../db/tables/outbound.js';
import { queueExternalOfRecord } from './submissions.js';
import { submissionStore } from './submission-store.js';
import type { EmailEvent, EventRecorder } from '../webhooks/events.js';
import { classify } from './classify.js';
import { filter } from './filter.js';
import { asWritten, withPrepended, writeOwnBytes, type OwnBytes } from './own-bytes.js';
import { isSpamVerdict, recipientsOfSent, saveVerdicts, type VerdictCounts } from '../spam/filing.js';
import { spamStatusField } from '../spam/header.js';
import { rememberCorrespondents } from '../spam/reputation.js';
import type { SpamVerdict } from '../inbound/spam-verdict.js';
import type { DecisionSteps, Delivery, Filtered, Placement, Recipient, SideEffects } from '../inbound/delivery-steps.js';

/** What the batch transaction uses; `steps` replaces the default classify and filter steps. */
export interface PipelineDeps {
  store: IngestStore;
  writer: EmailWriter;
  events: EventRecorder;
  steps?: DecisionSteps;
  /** Reads a raw file by the name its row keeps (a copy with bytes of its own of mail kept in a file). */
  readRawFile?: (name: string) => Promise<Buffer>;
}

/** The steps a pipeline runs when not told otherwise. */
export const defaultSteps: DecisionSteps = { classify, filter };

/** One copy to file, with where it came from. */
interface PlannedCopy {
  copy: Copy;
  from: Delivery;
  /** Set for a delivered copy: its recipient and placement. */
  placed?: { recipient: Recipient; placement: Placement };
  /** Set for a filed (Sent) copy. */
  filed?: FiledCopy;
  /** Bytes of its own (a Sent copy's shorter bytes, a placement's prepend); else it shares its queued row's. */
  own?: OwnBytes;
}

/** Steps 2-3 as the transaction sees them: SMTP mail arrives parsed and authenticated (decoded here); API rows are read. */
async function parsed(trx: Db, store: IngestStore, input: StoreInput): Promise<Delivery[]> {
  const smtp = input.prepared.map(({ encoded, ...p }): Delivery => ({ ...p, kind: 'smtp', message: decodeMessage(encoded) }));
  if (input.apiIds.length === 0) return smtp;
  const rows = await store.load(trx, input.apiIds);
  const api = rows.filter((r) => r.status === 'queued' && r.kind === 'api').map((r): Delivery => {
    const message = JSON.parse(r.message) as StoredMessage;
    return { id: r.id, kind: 'api', targets: JSON.parse(r.targets) as Target[], message, mailFrom: message.fromEmail, size: r.size, rawPath: null };
  });
  return [...api, ...smtp];
}

/**
 * The mailboxes a message is delivered to: each once, only while it still belongs to the tenant
 * that accepted it (a mailbox deleted since gets nothing). Filed targets are not recipients.
 */
function recipientsOf(d: Delivery, owners: Map<number, number>): Recipient[] {
  const seen = new Set<number>();
  const out: Recipient[] = [];
  for (const t of d.targets) {
    if (t.filed) continue;
    for (const mailboxId of t.mailboxIds) {
      if (owners.get(mailboxId) !== t.tenantId || seen.has(mailboxId)) continue;
      seen.add(mailboxId);
      out.push({ tenantId: t.tenantId, mailboxId, address: t.address });
    }
  }
  return out;
}

/** A delivered copy as its placement says. */
function placedCopy(d: Delivery, recipient: Recipient, placement: Placement, extra = false): PlannedCopy {
  const prepend = placement.prepend ?? '';
  // A spam verdict's trace header is put in front of the bytes as they are read (emails/files.ts): counted here.
  // (less the outside X-Spam-* fields reading leaves out of SMTP mail held in memory).
  const traced = isSpamVerdict(placement.spam) ? spamStatusField(placement.spam).length - (d.kind === 'smtp' ? d.message.foreignSpamBytes ?? 0 : 0) : 0;
  // SMTP mail with a prepend has bytes of its own; without, its copies share the queued row's.
  const own = d.kind === 'smtp' && prepend ? { prefix: prepend, skip: 0 } : undefined;
  return {
    copy: {
      tenantId: recipient.tenantId, mailboxId: recipient.mailboxId, toEmail: recipient.address,
      inboundId: d.kind === 'smtp' && !own ? d.id : null,
      size: d.size + Buffer.byteLength(prepend) + traced, message: prepend ? withPrepended(d.message, prepend) : d.message,
      folder: placement.folder, keywords: placement.keywords, ...(traced ? { prefixBytes: traced } : {}), ...(extra ? { extra: true } : {}),
    },
    from: d, placed: { recipient, placement }, ...(own ? { own } : {}),
  };
}

/** The filed copies of a message (a submission's Sent copy): one per filed target whose mailbox is still its tenant's. */
function filedCopies(d: Delivery, owners: Map<number, number>): PlannedCopy[] {
  const out: PlannedCopy[] = [];
  for (const t of d.targets) {
    if (!t.filed) continue;
    const omit = t.filed.omit;
    for (const mailboxId of t.mailboxIds) {
      if (owners.get(mailboxId) !== t.tenantId) continue;
      out.push({
        copy: {
          tenantId: t.tenantId, mailboxId, toEmail: t.address, inboundId: d.kind === 'smtp' && !omit ? d.id : null,
          size: omit ? d.size - omit.bytes : d.size, message: omit ? asWritten(d.message, omit) : d.message, filedIn: t.filed.folder,
        },
        from: d, filed: t.filed, ...(omit ? { own: { prefix: '', skip: omit.bytes } } : {}),
      });
    }
  }
  return out;
}

/**
 * The created copy of each planned copy (storeCopies answers in the order of `copies`, leaving
 * out the ones it skipped as duplicates), or undefined for a skipped one.
 */
function alignCreated(copies: Copy[], created: Created[]): Array<Created | undefined> {
  const out: Array<Created | undefined> = [];
  let j = 0;
  for (const c of copies) {
    const x = created[j];
    const same = x !== undefined && x.mailboxId === c.mailboxId && x.tenantId === c.tenantId && x.inboundId === c.inboundId && x.size === c.size;
    out.push(same ? x : undefined);
    if (same) j++;
  }
  return out;
}

const domainPart = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Step 7's second half: the filter's redirects, as a forwarder's items (from the recipient's domain). */
function redirectRows(d: Delivery, effects: SideEffects, copyOf: (r: Recipient) => number | null, now: number): Insertable<OutboundTable>[] {
  const auth = d.message.auth ? JSON.stringify(d.message.auth) : null;
  return effects.redirects.map((r) => ({
    tenant_id: r.recipient.tenantId, kind: 'forward', email_id: copyOf(r.recipient), inbound_id: d.id, message_ref: null,
    mail_from: d.mailFrom ?? '', rcpt_to: r.to, via_domain: domainPart(r.recipient.address), auth,
    next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
  }));
}

/** Step 8: the filter's replies, each with its bytes, from the null sender (kind 'dsn': no bounce is ever sent for one). */
async function queueReplies(trx: Db, effects: SideEffects, copyOf: (r: Recipient) => number | null, now: number): Promise<number> {
  for (const r of effects.replies) {
    const ref = await trx.insertInto('outbound_messages').values({ raw: r.raw, created_at: now }).returning('id').executeTakeFirstOrThrow();
    await trx.insertInto('outbound').values({
      tenant_id: r.recipient.tenantId, kind: 'dsn', email_id: copyOf(r.recipient), inbound_id: null, message_ref: Number(ref.id),
      mail_from: '', rcpt_to: r.to, via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
    }).execute();
  }
  return effects.replies.length;
}

/** Notes messages that could not be parsed: set aside after their last try, else tried again later. */
async function noteFailures(trx: Db, store: IngestStore, failed: Failure[], now: number): Promise<number> {
  let queued = 0;
  for (const f of failed) {
    if (f.final) queued += await setAside(trx, store, f.id, f.error, now);
    else await store.bumpAttempts(trx, f.id, f.error);
  }
  return queued;
}

/**
 * The batch transaction (steps 4 to 8): per message, classify and filter each recipient's copy;
 * then file every copy with its index entries, quota usage of SMTP mail and `email.received`
 * events, queue forwards, redirects, replies and submissions' external recipients, mark the rows
 * done (or remove those nothing needs) and note failures.
 */
export async function deliverBatch(trx: Db, deps: PipelineDeps, input: StoreInput, now: number): Promise<StoreResult> {
  const { store, writer, events } = deps;
  const steps = deps.steps ?? defaultSteps;
  const deliveries = await parsed(trx, store, input);
  const owners = await store.mailboxOwners(trx, [...new Set(deliveries.flatMap((d) => d.targets.flatMap((t) => t.mailboxIds)))]);
  const planned: PlannedCopy[] = [];
  const effectsOf = new Map<Delivery, SideEffects>();
  const filterErrors: NonNullable<Filtered['errors']> = [];
  // Step 4 for the whole batch at once; then step 5 message by message.
  const addressed = deliveries.map((d) => ({ delivery: d, recipients: recipientsOf(d, owners) }));
  const toClassify = addressed.filter((a) => a.recipients.length > 0);
  const classifiedList = toClassify.length > 0 ? await steps.classify(trx, toClassify, now) : [];
  const classifiedOf = new Map(toClassify.map((a, i) => [a.delivery, classifiedList[i]]));
  for (const { delivery: d, recipients } of addressed) {
    const classified = classifiedOf.get(d) ?? [];
    const { placements, effects, errors } = recipients.length > 0 ? await steps.filter(trx, d, recipients, classified, now) : { placements: [], effects: { redirects: [], replies: [] }, errors: [] };
    if (errors) filterErrors.push(...errors);
    recipients.forEach((r, i) => {
      const p = placements[i];
      if (!p) return;
      planned.push(placedCopy(d, r, p));
      for (const more of p.also ?? []) planned.push(placedCopy(d, r, { ...p, ...more, also: undefined }, true));
    });
    planned.push(...filedCopies(d, owners));
    effectsOf.set(d, effects);
  }

  // Step 6, file.
  const copies = planned.map((p) => p.copy);
  const created = await writer.storeCopies(trx, copies);
  const aligned = alignCreated(copies, created);
  /** Filed copies (Sent) are silent: no email.received. */
  const silent = new Set<number>();
  const sends: Array<{ mailbox_id: number; recipients: number; at: number }> = [];
  /** The filed copy stored of each message: the email its external recipients' items name. */
  const filedCopyOf = new Map<Delivery, number>();
  /** The first stored copy of each message per tenant (where a forward came from), and per recipient mailbox. */
  const firstOf = new Map<Delivery, Map<number, number>>();
  const copyIdOf = new Map<Delivery, Map<number, number>>();
  const used = new Map<number, number>();
  const verdicts: Array<{ id: number; verdict: SpamVerdict }> = [];
  const counts: VerdictCounts = { ham: 0, junk: 0 };
  for (const [i, c] of aligned.entries()) {
    if (!c) continue;
    const p = planned[i];
    const spam = p.placed?.placement.spam;
    if (isSpamVerdict(spam)) { verdicts.push({ id: c.id, verdict: spam }); counts[spam.verdict]++; }
    // A mailbox's Sent copy (submission, POST /v1/mail/send) names whom it wrote to: known correspondents from now on.
    if (p.filed?.folder === 'Sent') await rememberCorrespondents(trx, c.mailboxId, recipientsOfSent(p.copy.message), now);
    const byTenant = firstOf.get(p.from) ?? new Map<number, number>();
    if (!byTenant.has(c.tenantId)) byTenant.set(c.tenantId, c.id);
    firstOf.set(p.from, byTenant);
    if (p.placed) copyIdOf.set(p.from, (copyIdOf.get(p.from) ?? new Map<number, number>()).set(c.mailboxId, c.id));
    // SMTP mail counts against quotas when stored (API mail counted when accepted).
    if (p.from.kind === 'smtp') used.set(c.mailboxId, (used.get(c.mailboxId) ?? 0) + c.size);
    if (p.own) {
      await writeOwnBytes(trx, c.id, p.from, p.own, deps.readRawFile);
      const imap = p.copy.message.imap;
      if (imap) await trx.insertInto('email_imap').values({ email_id: c.id, size: imap.size, envelope: imap.envelope, bodystructure: imap.bodystructure }).execute();
    }
    if (!p.filed) continue;
    silent.add(c.id);
    filedCopyOf.set(p.from, c.id);
    if (p.filed.outboundRef !== null) await store.linkSubmission(trx, p.filed.outboundRef, c.id);
    if (p.filed.sends) sends.push({ mailbox_id: c.mailboxId, recipients: p.filed.sends.recipients, at: p.filed.sends.at });
  }
  await submissionStore.recordSends(trx, sends, now);
  await saveVerdicts(trx, verdicts);
  for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
  await events.record(trx, created.filter((c) => !silent.has(c.id)).map((c): EmailEvent => ({ tenantId: c.tenantId, type: 'email.received', emailId: c.id, mailboxId: c.mailboxId })));

  // Step 7, forward: outbound items commit with the copies, so acknowledged mail never loses its forwards.
  const copyFor = (d: Delivery) => (r: Recipient) => copyIdOf.get(d)?.get(r.mailboxId) ?? firstOf.get(d)?.get(r.tenantId) ?? null;
  const forwards = forwardRows(deliveries.map((d) => ({
    inboundId: d.id, mailFrom: d.mailFrom, message: d.message, targets: d.targets, emailIdByTenant: firstOf.get(d) ?? new Map(),
  })), now);
  for (const d of deliveries) forwards.push(...redirectRows(d, effectsOf.get(d)!, copyFor(d), now));
  for (let i = 0; i < forwards.length; i += 200) await store.insertOutbound(trx, forwards.slice(i, i + 200));
  const forwarded = new Set(forwards.map((f) => f.inbound_id));

  // Step 8, reply.
  let queued = 0;
  for (const d of deliveries) queued += await queueReplies(trx, effectsOf.get(d)!, copyFor(d), now);

  // A submission's external recipients, carried by its record, are queued with its copies too.
  for (const d of deliveries) {
    for (const t of d.targets) {
      if (!t.external) continue;
      queued += await queueExternalOfRecord(trx, {
        inboundId: d.id, tenantId: t.tenantId, mailFrom: d.mailFrom ?? '', recipients: t.external.recipients, skip: t.external.skip,
        emailId: filedCopyOf.get(d) ?? null,
      }, now);
    }
  }
  const referenced = new Set(created.map((c) => c.inboundId));
  const unlink: string[] = [];
  const done = deliveries.map((d) => {
    // A copy with bytes of its own from a raw file has them by now: the file is no longer needed for it.
    const keep = forwarded.has(d.id) || referenced.has(d.id);
    if (!keep && d.rawPath) unlink.push(d.rawPath);
    return { id: d.id, keep };
  });
  await store.finish(trx, done);
  queued += await noteFailures(trx, store, input.failed, now);
  return {
    unlink, stored: created.length, forwarded: forwards.length + queued, mailboxIds: [...new Set(created.map((c) => c.mailboxId))], verdicts: counts,
    ...(filterErrors.length > 0 ? { filterErrors } : {}),
  };
}
