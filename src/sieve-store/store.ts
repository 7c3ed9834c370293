import { sql } from 'kysely';
import type { Db } from '../db/connection.js';
import { parseSieve, type CompiledScript, type SieveError } from '../sieve/index.js';

/** Limits of DECISIONS.md section 19. */
export const MAX_SCRIPTS = 10;
export const MAX_SCRIPT_BYTES = 64 * 1024;
export const MAX_NAME_CHARS = 128;

/** Why a script operation was refused; each face maps the code to its answer (REST status, ManageSieve response code). */
export type SieveRefusal = 'nonexistent' | 'exists' | 'max-scripts' | 'max-size' | 'parse' | 'active' | 'bad-name';

export class SieveStoreError extends Error {
  constructor(readonly code: SieveRefusal, message: string, readonly parse?: SieveError) {
    super(message);
    this.name = 'SieveStoreError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A listed script. */
export interface ScriptSummary { name: string; active: boolean; size: number }

/**
 * RFC 5804 section 1.6: a script name is UTF-8 without control characters (C0, DEL, C1, the line and
 * paragraph separators); we also cap its length.
 */
export function checkScriptName(name: string): void {
  // eslint-disable-next-line no-control-regex
  if (name.length === 0 || [...name].length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name) || LONE_SURROGATE.test(name)) {
    throw new SieveStoreError('bad-name', `Script name must be 1-${MAX_NAME_CHARS} characters without control characters`);
  }
}

/** Parses a script for storing: the size limit first, then the engine's verdict with line and column. */
export function checkScript(text: string): CompiledScript {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_SCRIPT_BYTES) throw new SieveStoreError('max-size', `Script is ${size} bytes; the limit is ${MAX_SCRIPT_BYTES}`);
  const parsed = parseSieve(text);
  if (!parsed.ok) {
    const e = parsed.error;
    // The engine's message may already name the place.
    const text = /^line \d+, column \d+/.test(e.message) ? e.message : `line ${e.line}, column ${e.column}: ${e.message}`;
    throw new SieveStoreError('parse', text, e);
  }
  return parsed.script;
}

/**
 * The scripts of every mailbox (both databases: plain SQL through Kysely). "At most one active" is
 * a partial unique index, so activation is "clear, then set" in one transaction.
 */
export function createSieveStore(db: Db, now: () => number) {
  async function exists(trx: Db, mailboxId: number, name: string) {
    return trx.selectFrom('sieve_scripts').select(['id', 'active']).where('mailbox_id', '=', mailboxId).where('name', '=', name).executeTakeFirst();
  }

  return {
    async list(mailboxId: number): Promise<ScriptSummary[]> {
      const rows = await db.selectFrom('sieve_scripts').select(['name', 'active', 'size']).where('mailbox_id', '=', mailboxId).orderBy('name').execute();
      return rows.map((r) => ({ name: r.name, active: Number(r.active) === 1, size: Number(r.size) }));
    },

    async get(mailboxId: number, name: string): Promise<(ScriptSummary & { script: string }) | null> {
      const r = await db.selectFrom('sieve_scripts').select(['name', 'active', 'size', 'script'])
        .where('mailbox_id', '=', mailboxId).where('name', '=', name).executeTakeFirst();
      return r ? { name: r.name, active: Number(r.active) === 1, size: Number(r.size), script: r.script } : null;
    },

    /** Whether a script of `size` bytes named `name` would fit (HAVESPACE; PUTSCRIPT checks again). */
    async haveSpace(mailboxId: number, name: string, size: number): Promise<void> {
      checkScriptName(name);
      if (size > MAX_SCRIPT_BYTES) throw new SieveStoreError('max-size', `Scripts may be at most ${MAX_SCRIPT_BYTES} bytes`);
      const r = await db.selectFrom('sieve_scripts').select(sql<number>`count(*)`.as('n')).where('mailbox_id', '=', mailboxId).where('name', '!=', name).executeTakeFirstOrThrow();
      if (Number(r.n) >= MAX_SCRIPTS) throw new SieveStoreError('max-scripts', `A mailbox may keep at most ${MAX_SCRIPTS} scripts`);
    },

    /** Stores (creates or replaces) a script that parses; `active` true also makes it the active one. */
    async put(mailboxId: number, name: string, text: string, active?: boolean): Promise<void> {
      checkScriptName(name);
      checkScript(text);
      const size = Buffer.byteLength(text, 'utf8');
      await db.transaction().execute(async (trx) => {
        const at = now();
        const old = await exists(trx, mailboxId, name);
        if (old) {
          await trx.updateTable('sieve_scripts').set({ script: text, size, updated_at: at }).where('id', '=', old.id).execute();
        } else {
          const r = await trx.selectFrom('sieve_scripts').select(sql<number>`count(*)`.as('n')).where('mailbox_id', '=', mailboxId).executeTakeFirstOrThrow();
          if (Number(r.n) >= MAX_SCRIPTS) throw new SieveStoreError('max-scripts', `A mailbox may keep at most ${MAX_SCRIPTS} scripts`);
          await trx.insertInto('sieve_scripts').values({ mailbox_id: mailboxId, name, script: text, size, active: 0, created_at: at, updated_at: at }).execute();
        }
        if (active === true) await activateIn(trx, mailboxId, name, at);
        else if (active === false && old && Number(old.active) === 1) {
          await trx.updateTable('sieve_scripts').set({ active: 0, updated_at: at }).where('mailbox_id', '=', mailboxId).where('active', '=', 1).execute();
        }
      });
    },

    /** Deletes a script; `refuseActive` (ManageSieve, RFC 5804 2.10) refuses the active one. */
    async remove(mailboxId: number, name: string, refuseActive: boolean): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const old = await exists(trx, mailboxId, name);
        if (!old) throw new SieveStoreError('nonexistent', 'No script by that name');
        if (refuseActive && Number(old.active) === 1) throw new SieveStoreError('active', 'The active script cannot be deleted; deactivate it first');
        await trx.deleteFrom('sieve_scripts').where('id', '=', old.id).execute();
      });
    },

    async rename(mailboxId: number, from: string, to: string): Promise<void> {
      checkScriptName(to);
      await db.transaction().execute(async (trx) => {
        const old = await exists(trx, mailboxId, from);
        if (!old) throw new SieveStoreError('nonexistent', 'No script by that name');
        if (from === to) return;
        if (await exists(trx, mailboxId, to)) throw new SieveStoreError('exists', 'A script by the new name exists');
        await trx.updateTable('sieve_scripts').set({ name: to, updated_at: now() }).where('id', '=', old.id).execute();
      });
    },

    /** Makes `name` the active script; an empty name (or null) deactivates every script. */
    async activate(mailboxId: number, name: string | null): Promise<void> {
      await db.transaction().execute(async (trx) => {
        if (name === null || name === '') {
          await trx.updateTable('sieve_scripts').set({ active: 0, updated_at: now() }).where('mailbox_id', '=', mailboxId).where('active', '=', 1).execute();
          return;
        }
        if (!(await exists(trx, mailboxId, name))) throw new SieveStoreError('nonexistent', 'No script by that name');
        await activateIn(trx, mailboxId, name, now());
      });
    },

    /** The active script's text and version (delivery), or null. */
    async active(mailboxId: number): Promise<{ id: number; script: string; updatedAt: number } | null> {
      const r = await db.selectFrom('sieve_scripts').select(['id', 'script', 'updated_at']).where('mailbox_id', '=', mailboxId).where('active', '=', 1).executeTakeFirst();
      return r ? { id: Number(r.id), script: r.script, updatedAt: Number(r.updated_at) } : null;
    },
  };

  async function activateIn(trx: Db, mailboxId: number, name: string, at: number) {
    await trx.updateTable('sieve_scripts').set({ active: 0, updated_at: at }).where('mailbox_id', '=', mailboxId).where('active', '=', 1).where('name', '!=', name).execute();
    await trx.updateTable('sieve_scripts').set({ active: 1, updated_at: at }).where('mailbox_id', '=', mailboxId).where('name', '=', name).execute();
  }
}
export type SieveStore = ReturnType<typeof createSieveStore>;
