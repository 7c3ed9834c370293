import { sql } from 'kysely';
import type { SnapshotQuery, SnapshotRow } from '../ports.js';

/**
 * The walk on PostgreSQL, whose recursive term may name `reach` once: both steps (an
 * alias's destinations, the catch-all of an address nothing else takes) are one lateral union.
 */
export const postgresSnapshotQuery: SnapshotQuery = (address) => sql<SnapshotRow>`
  WITH RECURSIVE reach(addr) AS (
    SELECT ${address}::text
    UNION
    SELECT step.addr FROM reach r CROSS JOIN LATERAL (
      SELECT j.value AS addr FROM aliases a CROSS JOIN json_array_elements_text(a.goto::json) AS j(value)
        WHERE a.address = r.addr AND a.active = 1
          AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
      UNION ALL
      SELECT '@' || substr(r.addr, strpos(r.addr, '@') + 1)
        WHERE substr(r.addr, 1, 1) <> '@'
          AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
          AND NOT EXISTS (SELECT 1 FROM aliases a WHERE a.address = r.addr AND a.active = 1)
    ) AS step
  )
  SELECT 'mailbox' AS kind, m.address AS name, m.tenant_id AS tenant_id, m.id AS id, NULL AS goto, NULL::bigint AS active
    FROM mailboxes m WHERE m.address IN (SELECT addr FROM reach)
  UNION ALL
  SELECT 'alias', a.address, a.tenant_id, a.id, a.goto, a.active
    FROM aliases a WHERE a.address IN (SELECT addr FROM reach)
  UNION ALL
  SELECT 'domain', d.hostname, d.tenant_id, d.id, NULL, NULL
    FROM domains d WHERE d.hostname IN (SELECT substr(addr, strpos(addr, '@') + 1) FROM reach)
  `;
