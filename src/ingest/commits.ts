import { sql, type Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import { dialectOf } from '../db/dialect.js';
import type { Copy, Created, EmailWriter } from '../emails/writer.js';
import { submissionStore } from '../submission/store.js';
import type { FiledCopy } from './types.js';
import type { EmailEvent, EventRecorder } from '../webhooks/events.js';
import type { StoredMessage, Target } from './message.js';
import { messageKey, type IngestStore, type MessageKey } from './store.js';
import type { InboundTable } from './tables.js';
import { decodeMessage, type EncodedMessage } from './encoded-message.js';
import { forwardRows } from '../outbound/rows.js';
import { queueExternalOfRecord } from '../submission/commit.js';
import { setAside } from './set-aside.js';

const MB = 1024 * 1024;

/**
 * One message of a group commit (API mail; SMTP mail goes through the acceptance journal), as the
 * accepting side hands it to the storage thread: already serialised, so crossing threads copies
 * strings rather than object graphs.
 */
export type AcceptJob = { messageJson: string; messageId: string; target: Target; size: number };

/** A job's outcome: committed, or the API error to answer it with. */
export type AcceptOutcome = { ok: true } | { ok: false; status: 409 | 422; reason: string };

/** Whether a mailbox has room for `size` more bytes under its quota (0 = unlimited). */
export const fits = (m: { quota_mb: number; used_bytes: number }, size: number) => m.quota_mb <= 0 || m.used_bytes + size <= m.quota_mb * MB;

/**
 * The group commit's transaction body: queue rows for every job, message_id reservations for API
 * mail (409 for one stored or queued for a target mailbox), quotas counted as soon as accepted (422
 * over quota), so a burst cannot overrun a quota before the worker stores it.
 */
export async function acceptGroup(trx: Db, store: IngestStore, jobs: AcceptJob[], now: number): Promise<AcceptOutcome[]> {
  const keys: MessageKey[] = [];
  const boxes = new Set<number>();
  for (const j of jobs) {
    for (const mailboxId of j.target.mailboxIds) { keys.push({ mailboxId, messageId: j.messageId }); boxes.add(mailboxId); }
  }
  const taken = keys.length ? await store.takenKeys(trx, keys) : new Set<string>();
  const quota = new Map((await store.quotas(trx, [...boxes])).map((q) => [q.id, q]));
  const out: AcceptOutcome[] = [];
  const used = new Map<number, number>();
  const rows: Insertable<InboundTable>[] = [];
  const reservations: Array<{ keys: MessageKey[]; row: number }> = [];
  for (const j of jobs) {
    const mine = j.target.mailboxIds.map((mailboxId) => ({ mailboxId, messageId: j.messageId }));
    if (mine.some((k) => taken.has(messageKey(k)))) {
      out.push({ ok: false, status: 409, reason: 'message_id already exists for this mailbox' });
      continue;
    }
    if (j.target.mailboxIds.some((id) => { const q = quota.get(id); return q !== undefined && !fits(q, j.size); })) {
      out.push({ ok: false, status: 422, reason: 'mailbox over quota' });
      continue;
    }
    reservations.push({ keys: mine, row: rows.length });
    rows.push({ kind: 'api', message: j.messageJson, targets: JSON.stringify([j.target]), raw: null, raw_path: null, size: j.size, error: null, created_at: now, done_at: null });
    for (const k of mine) taken.add(messageKey(k));
    for (const id of j.target.mailboxIds) {
      const q = quota.get(id);
      if (q) q.used_bytes += j.size;
      used.set(id, (used.get(id) ?? 0) + j.size);
    }
    out.push({ ok: true });
  }
  const ids = await store.insertInbound(trx, rows);
  await store.reserve(trx, reservations.flatMap((r) => r.keys.map((k) => ({ mailbox_id: k.mailboxId, message_id: k.messageId, inbound_id: ids[r.row] }))));
  for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
  return out;
}

/** A queued message ready to be stored: where its copies go and what they hold. */
export interface Prepared {
  id: number;
  kind: 'api' | 'smtp';
  targets: Target[];
  message: StoredMessage;
  mailFrom: string | null;
  size: number;
  /** The raw file of SMTP mail kept outside its row, removed once nothing references it. */
  rawPath: string | null;
}


/** Raw SMTP mail once parsed, as it crosses to the storage thread: the StoredMessage encoded. */
export type ParsedRaw = Omit<Prepared, 'kind' | 'message'> & { encoded: EncodedMessage };

/** A queued message that could not be prepared (parsed); `final` gives up on it. */
export interface Failure {
  id: number;
  error: string;
  final: boolean;
}

/** One batch for the storage transaction: API rows by id (read inside it), SMTP mail already parsed. */
export interface StoreInput {
  apiIds: number[];
  prepared: ParsedRaw[];
  failed: Failure[];
}

/** What a stored batch leaves to do: raw files nothing references any more (removed after the commit). */
export interface StoreResult {
  unlink: string[];
  stored: number;
  /** Outbound items queued in the same transaction: forwards, and submissions' external recipients. */
  forwarded: number;
  /** The mailboxes that got mail (their idling IMAP sessions are woken). */
  mailboxIds: number[];
}

/** API rows of the queue as Prepared messages (their JSON is parsed here, off the accepting thread). */
async function loadApiRows(trx: Db, store: IngestStore, ids: number[]): Promise<Prepared[]> {
  if (ids.length === 0) return [];
  const rows = await store.load(trx, ids);
  return rows.filter((r) => r.status === 'queued' && r.kind === 'api').map((r) => {
    const message = JSON.parse(r.message) as StoredMessage;
    return { id: r.id, kind: 'api' as const, targets: JSON.parse(r.targets) as Target[], message, mailFrom: message.fromEmail, size: r.size, rawPath: null };
  });
}

/**
 * The created copy of each copy (storeCopies answers in the order of `copies`, leaving out the
 * ones it skipped as duplicates), or undefined for a skipped one.
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

/** The message as its filed copy keeps it: without the header fields of the delivered form's front, and IMAP's size of the shorter bytes. */
function asWritten(m: StoredMessage, omit: NonNullable<FiledCopy['omit']>): StoredMessage {
  const headers: Record<string, string | string[]> = { ...m.headers };
  // Those fields came first, so each is its name's first value.
  for (const name of omit.headers) {
    const v = headers[name];
    if (Array.isArray(v)) {
      const rest = v.slice(1);
      if (rest.length > 1) headers[name] = rest;
      else if (rest.length === 1) headers[name] = rest[0];
      else delete headers[name];
    } else {
      delete headers[name];
    }
  }
  return { ...m, headers, ...(m.imap ? { imap: { ...m.imap, size: m.imap.size - omit.bytes } } : {}) };
}

/** Keeps the filed copy's bytes: its queued message's raw bytes after `skip` (copied inside the database). */
async function copyRawTail(trx: Db, emailId: number, inboundId: number, skip: number): Promise<void> {
  const tail = dialectOf(trx) === 'postgres' ? sql`substring(raw from ${skip + 1})` : sql`substr(raw, ${skip + 1})`;
  await sql`INSERT INTO email_raw (email_id, raw) SELECT ${emailId}, ${tail} FROM inbound WHERE id = ${inboundId}`.execute(trx);
}

/**
 * The batch transaction: a copy per destination mailbox with its index entries, quota usage of
 * SMTP mail, `email.received` events, outbound forward items, rows marked done (or removed when nothing needs
 * them) and failures noted.
 */
export async function storeBatch(
  trx: Db, deps: { store: IngestStore; writer: EmailWriter; events: EventRecorder }, input: StoreInput, now: number,
): Promise<StoreResult> {
  const { store, writer, events } = deps;
  const parsed = input.prepared.map(({ encoded, ...p }): Prepared => ({ ...p, kind: 'smtp', message: decodeMessage(encoded) }));
  const prepared = [...(await loadApiRows(trx, store, input.apiIds)), ...parsed];
  const unlink: string[] = [];
  const owners = await store.mailboxOwners(trx, [...new Set(prepared.flatMap((p) => p.targets.flatMap((t) => t.mailboxIds)))]);
  const copies: Copy[] = [];
  /** Per copy: the filed target it stores (a submission's Sent copy), and the queued message it came from. */
  const filedOf: Array<{ filed: FiledCopy; from: Prepared } | undefined> = [];
  for (const p of prepared) {
    const seen = new Set<number>();
    for (const t of p.targets) {
      for (const mailboxId of t.mailboxIds) {
        // A mailbox deleted since acceptance gets nothing; one reached twice gets one copy.
        // A Sent copy may share the mailbox with a delivered one (mail to oneself): both are kept.
        if (owners.get(mailboxId) !== t.tenantId || (!t.filed && seen.has(mailboxId))) continue;
        if (!t.filed) seen.add(mailboxId);
        const omit = t.filed?.omit;
        copies.push({
          tenantId: t.tenantId, mailboxId, toEmail: t.address,
          // A copy that omits the delivered form's front fields has bytes of its own (email_raw, below), not the row's.
          inboundId: p.kind === 'smtp' && !omit ? p.id : null,
          size: omit ? p.size - omit.bytes : p.size, message: omit ? asWritten(p.message, omit) : p.message,
          ...(t.filed ? { filedIn: t.filed.folder } : {}),
        });
        filedOf.push(t.filed ? { filed: t.filed, from: p } : undefined);
      }
    }
  }
  const created = await writer.storeCopies(trx, copies);
  // A filed copy (a submission's Sent copy) is silent, counts for its sender's daily limit when its
  // record carries the count, and is what its external recipients' queue items came from.
  const silent = new Set<number>();
  const sends: Array<{ mailbox_id: number; recipients: number; at: number }> = [];
  const extraUsed: Array<{ mailboxId: number; size: number }> = [];
  /** The filed copy stored of each queued message: the email its external recipients' items name. */
  const filedCopyOf = new Map<Prepared, number>();
  const aligned = alignCreated(copies, created);
  for (const [i, c] of aligned.entries()) {
    const f = filedOf[i];
    if (!f || !c) continue;
    silent.add(c.id);
    filedCopyOf.set(f.from, c.id);
    if (f.filed.outboundRef !== null) await store.linkSubmission(trx, f.filed.outboundRef, c.id);
    if (f.filed.sends) sends.push({ mailbox_id: c.mailboxId, recipients: f.filed.sends.recipients, at: f.filed.sends.at });
    if (f.filed.omit) {
      await copyRawTail(trx, c.id, f.from.id, f.filed.omit.bytes);
      const imap = copies[i].message.imap;
      if (imap) await trx.insertInto('email_imap').values({ email_id: c.id, size: imap.size, envelope: imap.envelope, bodystructure: imap.bodystructure }).execute();
      extraUsed.push({ mailboxId: c.mailboxId, size: c.size });
    }
  }
  await submissionStore.recordSends(trx, sends, now);
  // The first copy of each message per tenant is where a forward came from.
  const emailIds = new Map<StoredMessage, Map<number, number>>();
  aligned.forEach((c, i) => {
    if (!c) return;
    const byTenant = emailIds.get(copies[i].message) ?? new Map<number, number>();
    if (!byTenant.has(c.tenantId)) byTenant.set(c.tenantId, c.id);
    emailIds.set(copies[i].message, byTenant);
  });
  const used = new Map<number, number>();
  for (const c of created) if (c.inboundId !== null) used.set(c.mailboxId, (used.get(c.mailboxId) ?? 0) + c.size);
  for (const x of extraUsed) used.set(x.mailboxId, (used.get(x.mailboxId) ?? 0) + x.size);
  for (const [id, delta] of used) await store.addUsedBytes(trx, id, delta);
  await events.record(trx, created.filter((c) => !silent.has(c.id)).map((c): EmailEvent => ({ tenantId: c.tenantId, type: 'email.received', emailId: c.id, mailboxId: c.mailboxId })));
  const referenced = new Set(created.map((c) => c.inboundId));
  const done: Array<{ id: number; keep: boolean }> = [];
  // Outbound items commit with the copies: acknowledged mail never loses its forwards.
  const forwards = forwardRows(prepared.map((p) => ({
    inboundId: p.id, mailFrom: p.mailFrom, message: p.message, targets: p.targets, emailIdByTenant: emailIds.get(p.message) ?? new Map(),
  })), now);
  for (let i = 0; i < forwards.length; i += 200) await store.insertOutbound(trx, forwards.slice(i, i + 200));
  const forwarded = new Set(forwards.map((f) => f.inbound_id));
  // A submission's external recipients, carried by its record, are queued with its copies too.
  let submitted = 0;
  for (const p of prepared) {
    for (const t of p.targets) {
      if (!t.external) continue;
      submitted += await queueExternalOfRecord(trx, {
        inboundId: p.id, tenantId: t.tenantId, mailFrom: p.mailFrom ?? '', recipients: t.external.recipients, skip: t.external.skip,
        emailId: filedCopyOf.get(p) ?? null,
      }, now);
    }
  }
  for (const p of prepared) {
    const keep = forwarded.has(p.id) || referenced.has(p.id);
    done.push({ id: p.id, keep });
    if (!keep && p.rawPath) unlink.push(p.rawPath);
  }
  await store.finish(trx, done);
  for (const f of input.failed) {
    if (f.final) {
      submitted += await setAside(trx, store, f.id, f.error, now);
    } else {
      await store.bumpAttempts(trx, f.id, f.error);
    }
  }
  return { unlink, stored: created.length, forwarded: forwards.length + submitted, mailboxIds: [...new Set(created.map((c) => c.mailboxId))] };
}
