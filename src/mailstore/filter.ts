import { sieveFilter } from '../sieve-store/filter.js';
import type { FilterStep } from '../inbound/delivery-steps.js';

/**
 * The filter step of delivery (Sieve and vacation, DECISIONS.md section 19): the mailbox's active
 * script and its REST vacation reply decide each copy's final placement and the redirects and
 * replies to queue (sieve-store/filter.ts). Recipients with neither keep the classified placement.
 */
export const filter: FilterStep = sieveFilter;
