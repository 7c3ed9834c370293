import type { NodeSession } from '../../db/pg-session.js';
import type { Logger } from '../../logger.js';
import type { MailChanges } from '../mail-changes.js';

/** The channel of committed mail changes; the payload is mailbox ids, comma separated. */
const CHANNEL = 'mailstead_mail';
/** PostgreSQL refuses payloads of 8000 bytes or more: longer id lists go out in several. */
const MAX_PAYLOAD = 7900;

/** Splits ids into payloads under the limit. */
export function changePayloads(ids: readonly number[]): string[] {
  const out: string[] = [];
  let cur = '';
  for (const id of ids) {
    const s = String(id);
    if (cur && cur.length + 1 + s.length > MAX_PAYLOAD) { out.push(cur); cur = ''; }
    cur = cur ? `${cur},${s}` : s;
  }
  if (cur) out.push(cur);
  return out;
}

/** The mailbox ids of a payload; anything that is not an id list (another writer's word) is none. */
export function parseChangePayload(payload: string): number[] {
  if (!/^[0-9]{1,15}(,[0-9]{1,15})*$/.test(payload)) return [];
  return payload.split(',').map(Number);
}

/**
 * Committed mail changes across nodes on PostgreSQL (DECISIONS.md section 17: IDLE and sync see
 * changes made on any node). Each node NOTIFYs the ids of the mailboxes it changed, from its own
 * session right after the commit returned, so a node woken by it reads the change; and LISTENs,
 * feeding other nodes' ids into its local MailChanges (its own it told itself already). Commits
 * that land while a NOTIFY is under way are gathered into the next one, so a busy ingest costs a
 * statement per round trip, not per batch. A NOTIFY lost with a connection (or a node dying between
 * commit and NOTIFY) leaves the change to IDLE's poll.
 */
export function createChangeRelay(session: NodeSession, logger: Logger) {
  const pending = new Set<number>();
  let sending = false;

  async function drain(): Promise<void> {
    try {
      while (pending.size > 0) {
        const ids = [...pending];
        pending.clear();
        for (const payload of changePayloads(ids)) await session.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
      }
    } catch (err) {
      logger.warn({ err }, 'telling other nodes of mail changes failed (their IDLE poll will see them)');
    } finally {
      sending = false;
      if (pending.size > 0) start();
    }
  }

  function start(): void {
    sending = true;
    setImmediate(() => void drain());
  }

  return {
    /** Queues a NOTIFY of committed changes of these mailboxes (MailChanges' `publish`). */
    publish(mailboxIds: readonly number[]): void {
      for (const id of mailboxIds) pending.add(id);
      if (!sending) start();
    },
    /** Feeds other nodes' changes into `changes`. */
    listen(changes: MailChanges): Promise<void> {
      return session.listen(CHANNEL, (payload, own) => {
        // null: notifications may have been lost while reconnecting; IDLE's poll covers those.
        if (own || payload === null) return;
        changes.arrived(parseChangePayload(payload));
      });
    },
  };
}
