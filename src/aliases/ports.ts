import type { RawBuilder } from 'kysely';

/** The rows one resolution may need: hosted domains, mailboxes and aliases reachable from an address. */
export interface RecipientSnapshot {
  /** Hosted hostnames and their tenant. */
  domains: ReadonlyMap<string, { tenantId: number }>;
  /** Mailboxes by address. */
  mailboxes: ReadonlyMap<string, { id: number; tenantId: number }>;
  /** Aliases by address; a catch-all is keyed `@<domain>`. */
  aliases: ReadonlyMap<string, { tenantId: number; goto: readonly string[]; active: boolean }>;
}

/** A row of the snapshot query: a mailbox, an alias or a domain reachable from the address. */
export interface SnapshotRow {
  kind: 'mailbox' | 'alias' | 'domain';
  name: string;
  tenant_id: number;
  id: number;
  goto: string | null;
  active: number | null;
}

/**
 * The one statement that reads every row a resolution of an address may need (a recursive walk
 * over aliases and catch-alls), whose SQL differs between the backends (sqlite/ and postgres/snapshot-query.ts).
 */
export type SnapshotQuery = (address: string) => RawBuilder<SnapshotRow>;
