import type { Migration } from 'kysely';
import * as m001 from './001_core.js';

/**
 * Every migration, by name; names sort in the order they run. A capability adds its own numbered
 * file and one line here (a static list, so the build needs no file-system discovery).
 */
export const migrations: Record<string, Migration> = {
  '001_core': m001,
};
