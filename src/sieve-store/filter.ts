import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Insertable } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { folderStore } from '../emails/folder-store.js';
import type { Prepared } from '../ingest/commits.js';
import type { OutboundTable } from '../outbound/tables.js';
import { parseSieve, runSieve, type CompiledScript, type SieveAction } from '../sieve/index.js';
import { headerFields } from '../vacation/headers.js';
import { refusalMessage, vacationReply } from '../vacation/reply.js';
import { noReplyReason } from '../vacation/rules.js';
import { MAX_REDIRECTS } from './limits.js';
import { addPlacement, cleanFlags, folderName, type Placement } from './placement.js';
import { renderForFilter } from './render.js';
import { vacationActive } from './vacation-window.js';

/** The plan of a batch: placements per message and mailbox (absent: INBOX as always), what was queued, what to log. */
export interface FilterPlan {
  placements: Map<string, Placement[]>;
  /** Inbound rows that redirects read their bytes from (kept after the batch). */
  keepInbound: Set<number>;
  queued: number;
  errors: Array<{ mailboxId: number; inboundId: number; message: string }>;
}

export const planKey = (inboundId: number, mailboxId: number) => `${inboundId}:${mailboxId}`;

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

/**
 * The filter step of delivery (DECISIONS.md section 19), run inside the transaction that stores a
 * batch's copies (ingest/commits.ts, both databases): for each copy bound for a mailbox with an
 * active script or an enabled vacation reply, runs the script and turns its actions into
 * placements (folder and flags) and side effects queued in the same transaction: redirects as
 * forwards (SRS, ARC, DKIM at sending), refusals and vacation replies as messages of their own
 * with the null sender. Mailboxes with neither cost one query per batch. A script that errs keeps
 * the message in INBOX and is reported for the log: nothing is lost.
 *
 * `readRawFile` reads an SMTP message kept as a file of the data dir (SQLite's large messages).
 */
export function createDeliveryFilter(deps: { readRawFile: (rawPath: string) => Promise<Buffer> }) {
  return async function plan(trx: Db, prepared: Prepared[], owners: ReadonlyMap<number, number>, now: number): Promise<FilterPlan> {
    const out: FilterPlan = { placements: new Map(), keepInbound: new Set(), queued: 0, errors: [] };
    // The copies the filter sees: delivered ones (not a Sent copy), one per message and mailbox.
    const copies: Array<{ p: Prepared; mailboxId: number; tenantId: number; rcpt: string }> = [];
    for (const p of prepared) {
      const seen = new Set<number>();
      for (const t of p.targets) {
        if (t.filed || t.external) continue;
        for (const mailboxId of t.mailboxIds) {
          if (owners.get(mailboxId) !== t.tenantId || seen.has(mailboxId)) continue;
          seen.add(mailboxId);
          copies.push({ p, mailboxId, tenantId: t.tenantId, rcpt: t.address });
        }
      }
    }
    const ids = [...new Set(copies.map((c) => c.mailboxId))];
    if (ids.length === 0) return out;
    const [scripts, vacations] = await Promise.all([
      trx.selectFrom('sieve_scripts').select(['id', 'mailbox_id', 'script', 'updated_at']).where('active', '=', 1).where('mailbox_id', 'in', ids).execute(),
      trx.selectFrom('vacation_settings').selectAll().where('enabled', '=', 1).where('mailbox_id', 'in', ids).execute(),
    ]);
    if (scripts.length === 0 && vacations.length === 0) return out;
    const scriptOf = new Map(scripts.map((s) => [Number(s.mailbox_id), s]));
    const vacationOf = new Map(vacations.filter((v) => vacationActive(v.start_date, v.end_date, now)).map((v) => [Number(v.mailbox_id), v]));
    const mine = copies.filter((c) => scriptOf.has(c.mailboxId) || vacationOf.has(c.mailboxId));
    if (mine.length === 0) return out;
    const boxes = [...new Set(mine.map((c) => c.mailboxId))];
    await folderStore.ensureDefaults(trx, boxes, now);
    const [addresses, folderRows, rawRows] = await Promise.all([
      trx.selectFrom('mailboxes').select(['id', 'address']).where('id', 'in', boxes).execute(),
      trx.selectFrom('folders').select(['mailbox_id', 'name']).where('mailbox_id', 'in', boxes).execute(),
      trx.selectFrom('inbound').select(['id', 'raw', 'raw_path']).where('id', 'in', [...new Set(mine.filter((c) => c.p.kind === 'smtp').map((c) => c.p.id)).values(), -1]).execute(),
    ]);
    const addressOf = new Map(addresses.map((a) => [Number(a.id), a.address]));
    const folders = new Map<number, Set<string>>();
    for (const f of folderRows) {
      const set = folders.get(Number(f.mailbox_id)) ?? new Set<string>();
      set.add(f.name);
      folders.set(Number(f.mailbox_id), set);
    }
    const rawOf = new Map<number, Buffer>();
    for (const r of rawRows) {
      if (r.raw) rawOf.set(Number(r.id), Buffer.from(r.raw));
      else if (r.raw_path) rawOf.set(Number(r.id), await deps.readRawFile(r.raw_path));
    }
    const redirectsOf = new Map<number, number>();

    async function queueOwn(tenantId: number, to: string, raw: Buffer): Promise<void> {
      const { id } = await trx.insertInto('outbound_messages').values({ raw, created_at: now }).returning('id').executeTakeFirstOrThrow();
      await trx.insertInto('outbound').values({
        tenant_id: tenantId, kind: 'dsn', email_id: null, inbound_id: null, message_ref: Number(id), mail_from: '', rcpt_to: to,
        via_domain: null, auth: null, next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
      }).execute();
      out.queued++;
    }

    for (const c of mine) {
      try {
        await filterOne(c);
      } catch (err) {
        // Nothing is lost: a failure of the filter keeps the message in INBOX (a database error still fails the batch, which is stored again).
        out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: (err as Error)?.message ?? String(err) });
        out.placements.set(planKey(c.p.id, c.mailboxId), [{ folder: 'INBOX', flags: [] }]);
      }
    }
    return out;

    async function filterOne(c: (typeof mine)[number]): Promise<void> {
      const mailbox = addressOf.get(c.mailboxId);
      if (!mailbox) return;
      const raw = c.p.kind === 'smtp' ? rawOf.get(c.p.id) ?? null : renderForFilter(c.p.message, c.rcpt);
      if (!raw) return; // no bytes to judge by: delivered as always
      const fields = headerFields(raw);
      const boxFolders = folders.get(c.mailboxId) ?? new Set<string>(['INBOX']);
      const placements: Placement[] = [];
      let actions: SieveAction[] = [{ type: 'keep', flags: [] }];
      const script = scriptOf.get(c.mailboxId);
      if (script) {
        const program = compile(Number(script.id), Number(script.updated_at), script.script);
        if (!program) {
          out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: 'the active script no longer parses' });
        } else {
          try {
            const outcome = runSieve(program, {
              raw, envelope: { from: c.p.mailFrom, to: c.rcpt }, spam: null, mailboxAddress: mailbox, now: new Date(now),
              folderExists: (name) => boxFolders.has(folderName(name) ?? '\u0000'),
            });
            actions = outcome.actions;
            if (outcome.error) out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: `line ${outcome.error.line}: ${outcome.error.message}` });
          } catch (err) {
            actions = [{ type: 'keep', flags: [] }];
            out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: (err as Error)?.message ?? String(err) });
          }
        }
      }
      let keptInInbox = false;
      let vacationDone = false;
      for (const a of actions) {
        switch (a.type) {
          case 'keep':
            addPlacement(placements, { folder: 'INBOX', flags: cleanFlags(a.flags) });
            keptInInbox = true;
            break;
          case 'fileinto': {
            let folder = folderName(a.folder) ?? 'INBOX';
            if (!boxFolders.has(folder)) {
              if (a.create) { await folderStore.create(trx, c.mailboxId, folder, now); boxFolders.add(folder); }
              else folder = 'INBOX';
            }
            addPlacement(placements, { folder, flags: cleanFlags(a.flags) });
            if (folder === 'INBOX') keptInInbox = true;
            break;
          }
          case 'redirect': {
            if (!REDIRECT_ADDRESS.test(a.address)) { out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: 'redirect to an address that is not valid skipped' }); break; }
            const n = redirectsOf.get(c.p.id) ?? 0;
            if (n >= MAX_REDIRECTS) { out.errors.push({ mailboxId: c.mailboxId, inboundId: c.p.id, message: `more than ${MAX_REDIRECTS} redirects; ${a.address} skipped` }); break; }
            redirectsOf.set(c.p.id, n + 1);
            const row: Insertable<OutboundTable> = {
              tenant_id: c.tenantId, kind: 'forward', email_id: null, inbound_id: c.p.id, message_ref: null,
              mail_from: c.p.mailFrom ?? '', rcpt_to: a.address, via_domain: domainOf(mailbox),
              auth: c.p.message.auth ? JSON.stringify(c.p.message.auth) : null,
              next_attempt_at: now, last_response: null, created_at: now, updated_at: now,
            };
            await trx.insertInto('outbound').values(row).execute();
            out.keepInbound.add(c.p.id);
            out.queued++;
            break;
          }
          case 'reject': {
            const sender = c.p.mailFrom;
            if (!sender || /^mailer-daemon@/i.test(sender)) break; // never to <> (RFC 5429 2.1)
            const end = raw.indexOf('\r\n\r\n');
            await queueOwn(c.tenantId, sender, refusalMessage({
              mailbox, to: sender, reason: a.reason, originalHeaders: raw.subarray(0, end < 0 ? Math.min(raw.length, 64 * 1024) : end).toString('utf8'),
              originalSubject: fields.get('subject')?.[0] ?? '', now: new Date(now),
            }));
            break;
          }
          case 'discard':
            break;
          case 'vacation': {
            vacationDone = true;
            const own = [mailbox, ...a.addresses];
            const sender = c.p.mailFrom;
            if (noReplyReason({ sender, fields, ownAddresses: own, junk: false }) !== null) break;
            const seconds = Math.max(60, a.seconds);
            // RFC 5230 4.2: without :handle, replies with the same reason and subject share one memory. A digest: any text, fixed length.
            const handle = `sieve:${createHash('sha256').update(a.handle ?? `${a.subject ?? ''}\n${a.reason}`).digest('hex')}`;
            if (!(await claim(trx, c.mailboxId, sender!, handle, now, now + seconds * 1000))) break;
            await queueOwn(c.tenantId, sender!, vacationReply({
              from: a.from ? a.from.replace(/^.*<([^>]+)>.*$/, '$1') : mailbox, to: sender!, subject: a.subject ?? null,
              originalSubject: fields.get('subject')?.[0] ?? '', reason: a.reason, mime: a.mime,
              originalMessageId: fields.get('message-id')?.[0] ?? null, originalReferences: fields.get('references')?.[0] ?? null, now: new Date(now),
            }));
            break;
          }
        }
      }
      // The REST vacation reply answers mail the script keeps into INBOX (section 19), apart from the script's own.
      const v = vacationOf.get(c.mailboxId);
      if (v && keptInInbox && !vacationDone) {
        const sender = c.p.mailFrom;
        if (noReplyReason({ sender, fields, ownAddresses: [mailbox], junk: false }) === null
          && await claim(trx, c.mailboxId, sender!, 'rest', now, now + Number(v.days) * DAY_MS)) {
          await queueOwn(c.tenantId, sender!, vacationReply({
            from: mailbox, to: sender!, subject: v.subject, originalSubject: fields.get('subject')?.[0] ?? '', reason: v.body, mime: false,
            originalMessageId: fields.get('message-id')?.[0] ?? null, originalReferences: fields.get('references')?.[0] ?? null, now: new Date(now),
          }));
        }
      }
      out.placements.set(planKey(c.p.id, c.mailboxId), placements);
    }
  };
}
export type DeliveryFilter = ReturnType<typeof createDeliveryFilter>;

/** Claims the one reply per sender and period (vacation_replies, migration 027), inside the batch's transaction. */
async function claim(trx: Db, mailboxId: number, sender: string, handle: string, now: number, until: number): Promise<boolean> {
  const r = await trx.insertInto('vacation_replies').values({ mailbox_id: mailboxId, sender: sender.toLowerCase(), handle, until_at: until })
    .onConflict((oc) => oc.columns(['mailbox_id', 'sender', 'handle']).doUpdateSet({ until_at: until }).where('vacation_replies.until_at', '<=', now))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Logs the scripts that erred in a stored batch, with their mailbox (their messages were kept in INBOX). */
export function logFilterErrors(log: Logger, errors: FilterPlan['errors'] | undefined): void {
  for (const e of errors ?? []) log.warn({ mailbox_id: e.mailboxId, inbound_id: e.inboundId, error: e.message }, 'sieve script failed; message kept in INBOX');
}

/** Reads a raw file of the data dir (SQLite keeps large SMTP messages there). */
export const rawFileReader = (rawDir: string) => (rawPath: string) => readFile(`${rawDir}/${rawPath.replace(/^.*\//, '')}`);
