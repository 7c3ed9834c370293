import type { CoreTables, RecipientTables } from './types.js';

/**
 * The whole database as Kysely sees it: the foundation's tables plus each capability's. A
 * capability declares its own tables in `src/<capability>/tables.ts` and adds them to this
 * intersection.
 */
export type Database = CoreTables & RecipientTables;
