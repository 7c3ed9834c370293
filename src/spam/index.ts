import type { Core } from '../core.js';
import type { Db } from '../db/connection.js';
import type { Emails } from '../emails/index.js';
import type { FolderMessages } from '../emails/folders/index.js';
import { emailParams, type EmailParams } from '../emails/schemas.js';
import { notFound } from '../errors.js';
import { createJudgement, expiredJunk } from './judgement.js';
import { spamLists } from './lists.js';
import { spamModelStore } from './model-store.js';
import { listEntryBody, listEntryParams, type ListEntryBody, type ListEntryParams } from './schemas.js';
import type { SpamTraining } from './training.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Junk deleted per retention tick (the next tick takes the rest). */
const RETENTION_BATCH = 500;

/**
 * The spam filter's API and loops (DECISIONS.md section 18): junk and not-junk judgements, the
 * allow and block lists, and junk retention. Verdicts themselves are given in delivery's classify
 * step (filing.ts, called from ingest/commits.ts) and training at the storage layer.
 */
export function installSpam(core: Core, deps: { emails: Emails; messages: FolderMessages; training: SpamTraining; mailboxes: { onMailboxesDeleted(fn: (trx: Db, ids: number[]) => Promise<void>): void } }) {
  const retentionDays = core.config.junkRetentionDays;
  const { db, registry, clock } = core;
  // A deleted mailbox's own model goes with it (its lists, training log and known correspondents cascade).
  deps.mailboxes.onMailboxesDeleted((trx, ids) => spamModelStore.forgetMailboxes(trx, ids));
  const judgement = createJudgement({ db, messages: deps.messages, training: deps.training, now: () => clock.now() });

  for (const [path, run, summary] of [
    ['/v1/emails/{email}/junk', judgement.junk, 'Mark an email junk: moved to Junk with $Junk, and the filter learns it'],
    ['/v1/emails/{email}/not-junk', judgement.notJunk, 'Mark an email not junk: moved to INBOX with $NotJunk, the filter learns it and its sender becomes a known correspondent'],
  ] as const) {
    registry.add<unknown, unknown, EmailParams>({
      method: 'post', path, summary, permission: 'write', params: emailParams, errors: [404],
      async handler(ctx, { key, params }) {
        await run(key.tenantId, params.email);
        ctx.body = { status: 'success' };
      },
    });
  }

  registry.add<ListEntryBody>({
    method: 'post', path: '/v1/spam/lists', summary: 'Add an allow or block entry for the account or one mailbox',
    permission: 'write', body: listEntryBody,
    async handler(ctx, { key, body }) {
      ctx.body = { status: 'success', data: await spamLists.add(db, key.tenantId, body, clock.now()) };
    },
  });
  registry.add({
    method: 'get', path: '/v1/spam/lists', summary: 'The allow and block entries of the account', permission: 'read',
    async handler(ctx, { key }) {
      ctx.body = { status: 'success', data: await spamLists.list(db, key.tenantId) };
    },
  });
  registry.add<unknown, unknown, ListEntryParams>({
    method: 'delete', path: '/v1/spam/lists/{id}', summary: 'Remove an allow or block entry', permission: 'write', params: listEntryParams, errors: [404],
    async handler(ctx, { key, params }) {
      if (!(await spamLists.remove(db, key.tenantId, params.id))) throw notFound('List entry not found');
      ctx.body = { status: 'success' };
    },
  });

  // Junk older than MAILSTEAD_JUNK_RETENTION_DAYS goes as DELETE /v1/emails/{id} would (0 keeps it).
  if (retentionDays > 0) {
    core.cron.add({
      name: 'spam.junk-retention', schedule: '41 * * * *',
      async run() {
        const expired = await expiredJunk(db, clock.now() - retentionDays * DAY_MS, RETENTION_BATCH);
        for (const e of expired) await deps.emails.service.remove(e.tenant_id, e.id).catch(() => undefined);
        return expired.length;
      },
    });
  }
  return { training: deps.training, judgement };
}
