import type { KyselyPlugin, OperationNode, RootOperationNode } from 'kysely';
import { DIRECTORY_CHANNEL } from './migrations/014_pg_directory_notify.js';
import type { NodeSession } from './pg-session.js';

/**
 * After this node sends a statement that changes the directory, how long its own count keeps
 * moving at every call (no answer reused): long enough for the statement's transaction to commit
 * and its NOTIFY to come back, so this node never reuses an answer its own committed write made old.
 */
const OWN_WRITE_SETTLE_MS = 2000;

/**
 * Columns of domains and mailboxes the resolver reads, and of tenants the key lookup reads; updates
 * of other columns (quota usage, DKIM keys) change no answer.
 */
const ADDRESSING = new Set(['hostname', 'address', 'tenant_id', 'id', 'plan_active', 'is_admin']);

/** The table a Kysely table reference names (`mailboxes`, `mailboxes as m`), or null. */
function tableName(node: OperationNode | undefined): string | null {
  if (!node) return null;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind !== 'TableNode') return null;
  return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
}

/**
 * Tables whose rows the count covers: the recipient resolver's (src/aliases/store.ts) and the API
 * keys with their tenants' flags (tenants/service.ts authenticate; migration 017).
 */
const COUNTED = new Set(['domains', 'mailboxes', 'aliases', 'api_keys', 'tenants']);
/** Of those, tables every update of which counts. */
const EVERY_UPDATE = new Set(['aliases', 'api_keys']);

/** Whether a statement built with Kysely writes a row the recipient resolver or the key lookup reads. */
export function writesDirectory(node: RootOperationNode): boolean {
  switch (node.kind) {
    case 'InsertQueryNode':
      return COUNTED.has(tableName(node.into) ?? '');
    case 'DeleteQueryNode':
      return node.from.froms.some((f) => COUNTED.has(tableName(f) ?? ''));
    case 'UpdateQueryNode': {
      const t = tableName(node.table) ?? '';
      if (EVERY_UPDATE.has(t)) return true;
      if (!COUNTED.has(t)) return false;
      return (node.updates ?? []).some((u) => {
        const column = u.column as unknown as { kind: string; column?: { name: string } };
        return column.kind === 'ColumnNode' && ADDRESSING.has(column.column!.name);
      });
    }
    default:
      return false;
  }
}

/**
 * The directory's change count on PostgreSQL, which the recipient resolver's cache keys its
 * answers on (aliases/resolver.ts cachedRecipientResolver), and the key lookup its key rows
 * (tenants/service.ts authenticate): an answer is reused only while the count stands still. It moves
 * - at each `mailstead_directory` notification: a commit on any node (or the CLI) that changed
 *   domains, mailboxes or aliases (migration 014's triggers), API keys or tenants' flags (017's);
 * - at every call while those notifications may not arrive: before this node's LISTEN is in
 *   place, and while its session is down or reconnecting (then no answer is reused at all), and
 *   once more after a reconnect (what was missed meanwhile is unknown);
 * - at every call for a moment after this node itself sends a directory write (`plugin`), so its
 *   own API answers are seen at once, as on SQLite.
 * The window it leaves: a commit on another node is visible to this node's queries a few
 * milliseconds before its NOTIFY arrives here, and an answer read in between is reused until the
 * NOTIFY lands (its count was taken before it). So for a few ms after another node deletes a
 * mailbox, RCPT here may still accept mail for it, and a mailbox just created there may be refused
 * (550 or 4xx per the resolver's answer; senders of a refused message retry or bounce it). That is
 * the same outcome as mail that arrived a few ms before the deletion: accepted mail for a mailbox
 * gone by storing time is handled by the storing path as for any such race, so the cache adds no
 * new case, only widens an existing one by the NOTIFY's latency. Acceptable for a lookup: the
 * SMTP listener keeps positive answers for a second of its own anyway (smtp/cache.ts), far longer.
 */
export function createDirectoryVersion(session: NodeSession, now: () => number = () => performance.now()) {
  let version = 0;
  /** Whether our LISTEN was sent once (it is then re-sent by every reconnect of the session). */
  let asked = false;
  let settled = false;
  let unsettledUntil = -Infinity;

  function listen(): void {
    asked = true;
    session.listen(DIRECTORY_CHANNEL, () => { version++; }).then(
      () => { settled = true; },
      // Connecting failed: the session connects again for its next statement and LISTENs every
      // channel before it counts as connected, so waiting for that is enough.
      () => { settled = true; },
    );
  }

  return {
    /** The count: equal in two calls means no directory change can have been missed in between. */
    changes(): number {
      if (!asked) listen();
      if (!settled || !session.connected() || now() < unsettledUntil) return ++version;
      return version;
    },
    /** Watches this node's own statements for directory writes (a Kysely plugin on its `db`). */
    plugin: {
      transformQuery({ node }) {
        if (writesDirectory(node)) {
          unsettledUntil = now() + OWN_WRITE_SETTLE_MS;
          version++;
        }
        return node;
      },
      transformResult: async ({ result }) => result,
    } satisfies KyselyPlugin,
  };
}
