import type { FilterStep } from './steps.js';

/**
 * The filter step of delivery (Sieve, DECISIONS.md section 19): pass-through for now, the
 * implicit keep of every classified placement, nothing redirected or answered. The Sieve
 * interpreter plugs in here, with exactly this signature.
 */
export const filter: FilterStep = async (_trx, _delivery, _recipients, classified) => ({ placements: classified, effects: { redirects: [], replies: [] } });
