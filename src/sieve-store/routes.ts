import type { Context } from 'koa';
import type { Db } from '../db/connection.js';
import { conflict, notFound, unprocessable } from '../errors.js';
import type { RouteRegistry } from '../http/registry.js';
import { ownedMailbox } from '../mailboxes/owned.js';
import type { Clock } from '../clock.js';
import {
  mailboxParams, putScriptBody, scriptParams, vacationBody,
  type MailboxParams, type PutScriptBody, type ScriptParams, type VacationBody,
} from './schemas.js';
import { SieveStoreError, type SieveStore } from './store.js';
import type { VacationStore } from './vacation-store.js';

/** A store refusal as the REST error contract; a parse error also carries its line and column. */
async function answering(ctx: Context, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof SieveStoreError)) throw err;
    if (err.code === 'parse' && err.parse) {
      ctx.status = 422;
      ctx.body = { status: 'error', reason: `Script does not parse: ${err.message}`, line: err.parse.line, column: err.parse.column };
      return;
    }
    if (err.code === 'nonexistent') throw notFound('Script not found');
    if (err.code === 'exists') throw conflict(err.message);
    throw unprocessable(err.message);
  }
}

/** When the start date is after the end date, either as a day or a time. */
function startAfterEnd(start: string | null | undefined, end: string | null | undefined): boolean {
  if (!start || !end) return false;
  const s = Date.parse(start.length === 10 ? `${start}T00:00:00Z` : start);
  const e = Date.parse(end.length === 10 ? `${end}T23:59:59Z` : end);
  return Number.isNaN(s) || Number.isNaN(e) || s > e;
}

/** The REST face of Sieve scripts and the vacation reply (DECISIONS.md section 19). */
export function sieveRoutes({ registry, db, scripts, vacation, clock }: {
  registry: RouteRegistry; db: Db; scripts: SieveStore; vacation: VacationStore; clock: Clock;
}) {

  registry.add<unknown, unknown, MailboxParams>({
    method: 'get', path: '/v1/mailboxes/{email}/sieve', summary: 'List the Sieve scripts of a mailbox',
    permission: 'read', params: mailboxParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      ctx.body = { status: 'success', data: await scripts.list(box.id) };
    },
  });

  // Before /sieve/{name}/..., so that "deactivate" is never taken for a script name.
  registry.add<unknown, unknown, MailboxParams>({
    method: 'post', path: '/v1/mailboxes/{email}/sieve/deactivate', summary: 'Deactivate the active Sieve script (mail is then kept into INBOX)',
    permission: 'write', params: mailboxParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      await scripts.activate(box.id, null);
      ctx.body = { status: 'success' };
    },
  });

  registry.add<PutScriptBody, unknown, ScriptParams>({
    method: 'put', path: '/v1/mailboxes/{email}/sieve/{name}', summary: 'Store a Sieve script (422 with line and column when it does not parse); active true also activates it',
    permission: 'write', params: scriptParams, body: putScriptBody, errors: [404, 422],
    async handler(ctx, { key, params, body }) {
      const box = await ownedMailbox(db, key, params.email);
      await answering(ctx, async () => {
        await scripts.put(box.id, params.name, body.script, body.active);
        const saved = await scripts.get(box.id, params.name);
        ctx.body = { status: 'success', data: { name: params.name, active: saved?.active ?? false, size: saved?.size ?? 0 } };
      });
    },
  });

  registry.add<unknown, unknown, ScriptParams>({
    method: 'get', path: '/v1/mailboxes/{email}/sieve/{name}', summary: 'One Sieve script with its text',
    permission: 'read', params: scriptParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      const script = await scripts.get(box.id, params.name);
      if (!script) throw notFound('Script not found');
      ctx.body = { status: 'success', data: script };
    },
  });

  registry.add<unknown, unknown, ScriptParams>({
    method: 'delete', path: '/v1/mailboxes/{email}/sieve/{name}', summary: 'Delete a Sieve script (the active one too: mail is then kept into INBOX)',
    permission: 'write', params: scriptParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      await answering(ctx, async () => {
        await scripts.remove(box.id, params.name, false);
        ctx.body = { status: 'success' };
      });
    },
  });

  registry.add<unknown, unknown, ScriptParams>({
    method: 'post', path: '/v1/mailboxes/{email}/sieve/{name}/activate', summary: 'Make a Sieve script the active one',
    permission: 'write', params: scriptParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      await answering(ctx, async () => {
        await scripts.activate(box.id, params.name);
        ctx.body = { status: 'success' };
      });
    },
  });

  registry.add<VacationBody, unknown, MailboxParams>({
    method: 'put', path: '/v1/mailboxes/{email}/vacation', summary: 'Set the vacation reply (applies to mail the active script keeps into INBOX)',
    permission: 'write', params: mailboxParams, body: vacationBody, errors: [404, 422],
    async handler(ctx, { key, params, body }) {
      const box = await ownedMailbox(db, key, params.email);
      if (startAfterEnd(body.start, body.end)) throw unprocessable('start must not be after end');
      const settings = { enabled: body.enabled, subject: body.subject ?? null, body: body.body, days: body.days ?? 7, start: body.start ?? null, end: body.end ?? null };
      await vacation.save(box.id, settings, clock.now());
      ctx.body = { status: 'success', data: settings };
    },
  });

  registry.add<unknown, unknown, MailboxParams>({
    method: 'get', path: '/v1/mailboxes/{email}/vacation', summary: 'The vacation reply of a mailbox',
    permission: 'read', params: mailboxParams, errors: [404],
    async handler(ctx, { key, params }) {
      const box = await ownedMailbox(db, key, params.email);
      const settings = await vacation.settings(box.id);
      ctx.body = { status: 'success', data: settings ?? { enabled: false, subject: null, body: '', days: 7, start: null, end: null } };
    },
  });
}

