import type { ClassifyStep } from '../inbound/delivery-steps.js';
import { inboxPlacement } from '../inbound/delivery-steps.js';

/**
 * The classification step of delivery (spam, DECISIONS.md section 18): pass-through for now, every
 * copy to INBOX without keywords. The spam filter plugs in here, with exactly this signature.
 */
export const classify: ClassifyStep = async (_trx, batch) => batch.map(({ recipients }) => recipients.map(() => inboxPlacement()));
