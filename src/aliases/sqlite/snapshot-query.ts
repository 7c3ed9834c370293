import { sql } from 'kysely';
import type { SnapshotQuery, SnapshotRow } from '../ports.js';

/** The walk on SQLite: a recursive term per step (an alias's destinations, the catch-all of an address nothing else takes). */
export const sqliteSnapshotQuery: SnapshotQuery = (address) => sql<SnapshotRow>`
  WITH RECURSIVE reach(addr) AS (
    SELECT ${address}
    UNION
    SELECT j.value FROM reach r
      JOIN aliases a ON a.address = r.addr AND a.active = 1
      JOIN json_each(a.goto) j
      WHERE NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
    UNION
    SELECT '@' || substr(r.addr, instr(r.addr, '@') + 1) FROM reach r
      WHERE substr(r.addr, 1, 1) <> '@'
        AND NOT EXISTS (SELECT 1 FROM mailboxes m WHERE m.address = r.addr)
        AND NOT EXISTS (SELECT 1 FROM aliases a WHERE a.address = r.addr AND a.active = 1)
  )
  SELECT 'mailbox' AS kind, m.address AS name, m.tenant_id AS tenant_id, m.id AS id, NULL AS goto, NULL AS active
    FROM mailboxes m WHERE m.address IN (SELECT addr FROM reach)
  UNION ALL
  SELECT 'alias', a.address, a.tenant_id, a.id, a.goto, a.active
    FROM aliases a WHERE a.address IN (SELECT addr FROM reach)
  UNION ALL
  SELECT 'domain', d.hostname, d.tenant_id, d.id, NULL, NULL
    FROM domains d WHERE d.hostname IN (SELECT substr(addr, instr(addr, '@') + 1) FROM reach)
`;
