import type { Db } from '../../db/connection.js';

/**
 * IMAP subscriptions to names that are no folder (RFC 9051 6.3.7: deleting a folder leaves its
 * subscription; LIST (SUBSCRIBED) shows it \NonExistent). A folder's own subscription is its
 * `subscribed` column; a name moves here when its subscribed folder is deleted and back when a
 * folder of that name is made again.
 */
export function subscriptionQueries(db: Db) {
  return {
    /** Names subscribed that are no folder. */
    orphanSubscriptions: async (mailboxId: number): Promise<string[]> =>
      (await db.selectFrom('imap_subscriptions').select('name').where('mailbox_id', '=', mailboxId).orderBy('name').execute()).map((r) => r.name),

    /** Keeps a subscription to a name that is (now) no folder. */
    keepSubscription: (mailboxId: number, name: string) =>
      db.insertInto('imap_subscriptions').values({ mailbox_id: mailboxId, name }).onConflict((oc) => oc.columns(['mailbox_id', 'name']).doNothing()).execute().then(() => undefined),

    /** Drops a kept subscription; whether there was one. */
    async dropSubscription(mailboxId: number, name: string): Promise<boolean> {
      const r = await db.deleteFrom('imap_subscriptions').where('mailbox_id', '=', mailboxId).where('name', '=', name).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}
