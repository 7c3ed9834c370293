import type { Db } from '../../db/connection.js';
import type { DeliveryStore } from '../delivery-store.js';
import type { DeliveryClaims } from '../ports.js';

/**
 * SQLite: one process sends. Every delivery left `sending` at start was left by a crash of this
 * very process; later, a `sending` row is always one of its own requests under way.
 */
export function sqliteDeliveryClaims(db: Db, deliveries: DeliveryStore): DeliveryClaims {
  return {
    hold: async () => {},
    letGo: async () => {},
    recover: (atStart) => (atStart ? deliveries.recoverSending(db) : Promise.resolve(0)),
  };
}
