import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { folderStore } from '../mailstore/folder-store.js';
import type { Classified, Delivery, Filtered, Placement, Recipient, Reply } from '../inbound/delivery-steps.js';
import { parseSieve, runSieve, type CompiledScript, type SieveAction } from '../sieve/index.js';
import { headerFields } from '../vacation/headers.js';
import { refusalMessage, vacationReply } from '../vacation/reply.js';
import { noReplyReason } from '../vacation/rules.js';
import { batchLookups, type ActiveScript, type MailboxFilters } from './batch-lookups.js';
import { MAX_REDIRECTS } from './limits.js';
import { cleanFlags, folderName } from './placement.js';
import { renderForFilter } from './render.js';
import { signReply } from './sign-reply.js';
import { vacationActive } from './vacation-window.js';

/** A script that failed on a message (the copy was kept in INBOX), for the log. */
export interface FilterError { mailboxId: number; inboundId: number; message: string }

const DAY_MS = 86_400_000;
/** An address a redirect may go to: printable, one @, no spaces or angle brackets. */
const REDIRECT_ADDRESS = /^[^\s<>@\u0000-\u001f\u007f]{1,64}@[A-Za-z0-9.-]{1,253}$/;
/** Compiled scripts by id, reused while the script is unchanged. */
const compiled = new Map<number, { updatedAt: number; script: CompiledScript | null }>();

function compile(id: number, updatedAt: number, text: string): CompiledScript | null {
  const hit = compiled.get(id);
  if (hit && hit.updatedAt === updatedAt) return hit.script;
  const r = parseSieve(text);
  if (compiled.size > 5000) compiled.clear();
  compiled.set(id, { updatedAt, script: r.ok ? r.script : null });
  return r.ok ? r.script : null;
}

const domainOf = (a: string) => a.slice(a.lastIndexOf('@') + 1).toLowerCase();
const junkOf = (p: Placement) => p.folder === 'Junk' || p.keywords.includes('$Junk');

/**
 * The filter step of delivery (DECISIONS.md section 19; mailstore/pipeline.ts step 5), inside the
 * batch's transaction, on both databases. For each recipient with an active script or an enabled
 * vacation reply it runs the script on the message and turns the actions into the copy's placement
 * (folder, keywords; null when nothing is kept) and side effects: redirects (queued as a forwarder's
 * copies: SRS, ARC, DKIM), refusals and vacation replies (from <>, bytes of their own). Recipients
 * with neither keep the classified placement: one query per message. A script that errs, or a
 * failure of this step short of the database, keeps the copy in INBOX and is reported: nothing is lost.
 *
 * A script that files a message into several folders (fileinto :copy beside keep) gets a copy in
 * each (the placement's `also`), each with the flags its action gave.
 */
export async function sieveFilter(trx: Db, d: Delivery, recipients: Recipient[], classified: Classified, now: number): Promise<Filtered & { errors: FilterError[] }> {
  const out: Filtered & { errors: FilterError[] } = { placements: [...classified], effects: { redirects: [], replies: [] }, errors: [] };
  const lookups = batchLookups(trx);
  const filters = await lookups.filtersOf(recipients.map((r) => r.mailboxId));
  const scriptOf = new Map<number, ActiveScript>();
  const vacationOf = new Map<number, NonNullable<MailboxFilters['vacation']>>();
  for (const [id, f] of filters) {
    if (f.script) scriptOf.set(id, f.script);
    if (f.vacation && vacationActive(f.vacation.start_date, f.vacation.end_date, now)) vacationOf.set(id, f.vacation);
  }
  const mine = recipients.map((r, i) => ({ r, i })).filter(({ r }) => scriptOf.has(r.mailboxId) || vacationOf.has(r.mailboxId));
  if (mine.length === 0) return out;
  const boxes = await lookups.boxesOf(mine.map(({ r }) => r.mailboxId), now);
  // The whole message: SMTP bytes from the queue row; mail kept in a file (large, SQLite) and API
  // mail are judged by a rendering. Read only for a script that reads the body (`require "body"`).
  let whole: Buffer | null = null;
  const wholeRaw = async (): Promise<Buffer> => {
    if (whole) return whole;
    const row = d.kind === 'smtp' ? await trx.selectFrom('inbound').select('raw').where('id', '=', d.id).executeTakeFirst() : undefined;
    return (whole = row?.raw ? Buffer.from(row.raw) : renderForFilter(d.message, recipients[0]?.address ?? ''));
  };
  // The header section, which every other test and every reply reads: SMTP mail parsed in memory
  // brings it from the parser (rawHead), so most messages cost no read of their bytes here.
  const head = d.message.rawHead !== undefined ? Buffer.from(d.message.rawHead, 'latin1') : await wholeRaw();
  const headOnly = d.message.rawHead !== undefined;
  // The header fields refusals and vacation replies read, parsed only when one is made.
  let parsedFields: Map<string, string[]> | null = null;
  const fieldsOf = () => (parsedFields ??= headerFields(head));
  let redirects = 0;
  /** Each reply's From address, whose domain signs it. */
  const fromOf = new Map<Reply, string>();
  const reply = (r: Recipient, to: string, bytes: Buffer, from: string) => {
    const item: Reply = { recipient: r, to, raw: bytes };
    fromOf.set(item, from);
    out.effects.replies.push(item);
  };

  for (const { r, i } of mine) {
    try {
      out.placements[i] = await filterOne(r, classified[i] ?? { folder: 'INBOX', keywords: [] });
    } catch (err) {
      out.errors.push({ mailboxId: r.mailboxId, inboundId: d.id, message: (err as Error)?.message ?? String(err) });
      out.placements[i] = { folder: 'INBOX', keywords: [] };
    }
  }
  // Replies leave signed by their From domain (refusals from its MAILER-DAEMON); one that cannot be signed still goes.
  for (const reply of out.effects.replies) {
    const from = fromOf.get(reply);
    if (!from) continue;
    try {
      reply.raw = await signReply(trx, reply.raw, from, now);
    } catch (err) {
      out.errors.push({ mailboxId: reply.recipient.mailboxId, inboundId: d.id, message: `reply not signed: ${(err as Error)?.message ?? String(err)}` });
    }
  }
  return out;

  async function filterOne(r: Recipient, base: Placement): Promise<Placement | null> {
    const box = boxes.get(r.mailboxId);
    const mailbox = box?.address;
    if (!box || !mailbox) return base;
    const boxFolders = box.folders;
    const junk = junkOf(base);
    let actions: SieveAction[] = [{ type: 'keep', flags: [] }];
    const script = scriptOf.get(r.mailboxId);
    if (script) {
      const program = compile(Number(script.id), Number(script.updated_at), script.script);
      if (!program) {
        out.errors.push({ mailboxId: r.mailboxId, inboundId: d.id, message: 'the active script no longer parses' });
      } else {
        const spam = base.spam as { score?: number; threshold?: number; verdict?: 'ham' | 'junk' } | undefined;
        const body = !headOnly || program.extensions.includes('body');
        const outcome = runSieve(program, {
          raw: body ? await wholeRaw() : head, ...(body ? {} : { size: d.size }), envelope: { from: d.mailFrom, to: r.address }, mailboxAddress: mailbox, now: new Date(now),
          spam: spam && typeof spam.score === 'number' && typeof spam.threshold === 'number' ? { score: spam.score, threshold: spam.threshold, verdict: spam.verdict ?? (junk ? 'junk' : 'ham') } : null,
          folderExists: (name) => boxFolders.has(folderName(name) ?? '\u0000'),
        });
        actions = outcome.actions;
        if (outcome.error) out.errors.push({ mailboxId: r.mailboxId, inboundId: d.id, message: `line ${outcome.error.line}: ${outcome.error.message}` });
      }
    }
    // Placements asked for: the implicit or explicit keep goes where classification put it (INBOX, or Junk for junk).
    const wanted: Array<{ folder: string; flags: string[] }> = [];
    let vacationDone = false;
    for (const a of actions) {
      switch (a.type) {
        case 'keep':
          wanted.push({ folder: base.folder, flags: a.flags });
          break;
        case 'fileinto': {
          let folder = folderName(a.folder) ?? 'INBOX';
          if (!boxFolders.has(folder)) {
            if (a.create) { await folderStore.create(trx, r.mailboxId, folder, now); boxFolders.add(folder); }
            else folder = 'INBOX';
          }
          wanted.push({ folder, flags: a.flags });
          break;
        }
        case 'redirect':
          if (!REDIRECT_ADDRESS.test(a.address)) { out.errors.push({ mailboxId: r.mailboxId, inboundId: d.id, message: 'a redirect to an address that is not valid was skipped' }); break; }
          if (redirects >= MAX_REDIRECTS) { out.errors.push({ mailboxId: r.mailboxId, inboundId: d.id, message: `more than ${MAX_REDIRECTS} redirects; ${a.address} skipped` }); break; }
          redirects++;
          out.effects.redirects.push({ recipient: r, to: a.address });
          break;
        case 'reject': {
          const sender = d.mailFrom;
          if (!sender || /^mailer-daemon@/i.test(sender)) break; // never to <> (RFC 5429 2.1)
          const end = head.indexOf('\r\n\r\n');
          // From the mailbox domain's MAILER-DAEMON (vacation/reply.ts): that domain signs.
          reply(r, sender, refusalMessage({
            mailbox, to: sender, reason: a.reason, originalHeaders: head.subarray(0, end < 0 ? Math.min(head.length, 64 * 1024) : end).toString('utf8'),
            originalSubject: fieldsOf().get('subject')?.[0] ?? '', now: new Date(now),
          }), mailbox);
          break;
        }
        case 'discard':
          break;
        case 'vacation': {
          vacationDone = true;
          const sender = d.mailFrom;
          if (noReplyReason({ sender, fields: fieldsOf(), ownAddresses: [mailbox, ...a.addresses], junk }) !== null) break;
          // RFC 5230 4.2: without :handle, replies with the same reason and subject share one memory. A digest: any text, fixed length.
          const handle = `sieve:${createHash('sha256').update(a.handle ?? `${a.subject ?? ''}\n${a.reason}`).digest('hex')}`;
          if (!(await claimReply(trx, r.mailboxId, sender!, handle, now, now + Math.max(60, a.seconds) * 1000))) break;
          const from = a.from ? a.from.replace(/^.*<([^>]+)>.*$/, '$1') : mailbox;
          reply(r, sender!, vacationReply({
            from, to: sender!, subject: a.subject ?? null,
            originalSubject: fieldsOf().get('subject')?.[0] ?? '', reason: a.reason, mime: a.mime,
            originalMessageId: fieldsOf().get('message-id')?.[0] ?? null, originalReferences: fieldsOf().get('references')?.[0] ?? null, now: new Date(now),
          }), from);
          break;
        }
      }
    }
    if (wanted.length === 0) return null;
    // A copy per folder named (keep beside fileinto :copy), each with its own flags.
    const byFolder = new Map<string, string[]>();
    for (const w of wanted) byFolder.set(w.folder, [...(byFolder.get(w.folder) ?? []), ...w.flags]);
    const [first, ...rest] = [...byFolder].map(([folder, flags]) => ({ folder, keywords: [...new Set([...base.keywords, ...cleanFlags(flags)])] }));
    const placement: Placement = { ...base, folder: first!.folder, keywords: first!.keywords, ...(rest.length > 0 ? { also: rest } : {}) };
    // The REST vacation reply answers mail the script keeps into INBOX (section 19), apart from the script's own.
    const v = vacationOf.get(r.mailboxId);
    if (v && byFolder.has('INBOX') && !vacationDone) {
      const sender = d.mailFrom;
      if (noReplyReason({ sender, fields: fieldsOf(), ownAddresses: [mailbox], junk }) === null
        && await claimReply(trx, r.mailboxId, sender!, 'rest', now, now + Number(v.days) * DAY_MS)) {
        reply(r, sender!, vacationReply({
          from: mailbox, to: sender!, subject: v.subject, originalSubject: fieldsOf().get('subject')?.[0] ?? '', reason: v.body, mime: false,
          originalMessageId: fieldsOf().get('message-id')?.[0] ?? null, originalReferences: fieldsOf().get('references')?.[0] ?? null, now: new Date(now),
        }), mailbox);
      }
    }
    return placement;
  }
}

/** Claims the one reply per sender and period (vacation_replies, migration 027), inside the batch's transaction. */
async function claimReply(trx: Db, mailboxId: number, sender: string, handle: string, now: number, until: number): Promise<boolean> {
  const r = await trx.insertInto('vacation_replies').values({ mailbox_id: mailboxId, sender: sender.toLowerCase(), handle, until_at: until })
    .onConflict((oc) => oc.columns(['mailbox_id', 'sender', 'handle']).doUpdateSet({ until_at: until }).where('vacation_replies.until_at', '<=', now))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Logs the scripts that erred in a stored batch, with their mailbox (their messages were kept in INBOX). */
export function logFilterErrors(log: Logger, errors: readonly FilterError[] | undefined): void {
  for (const e of errors ?? []) log.warn({ mailbox_id: e.mailboxId, inbound_id: e.inboundId, error: e.message }, 'sieve script failed; message kept in INBOX');
}
