import type { Migration } from 'kysely';
import * as m001 from './001_core.js';
import * as m002 from './002_mailboxes_aliases.js';
import * as m003 from './003_events.js';

/**
 * Every migration, by name; names sort in the order they run. A capability adds its own numbered
 * file and one line here (a static list, so the build needs no file-system discovery).
 */
export const migrations: Record<string, Migration> = {
  '001_core': m001,
  '002_mailboxes_aliases': m002,
  '003_events': m003,
};
