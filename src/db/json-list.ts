import type { Kysely, RawBuilder } from 'kysely';
import { dml } from './backend.js';

export { jsonList } from './dml.js';

/** `jsonList` on either backend, for stores that run on both: `dml(db).list(values)`. */
export const listOf = <T extends number | string>(db: Kysely<any>, values: readonly T[]): RawBuilder<T> => dml(db).list(values);
