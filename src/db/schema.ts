import type { CoreTables, RecipientTables } from './types.js';
import type { MailboxTables } from './tables/mailboxes.js';
import type { IngestTables } from './tables/ingest.js';
import type { EmailTables } from './tables/emails.js';
import type { WebhookTables } from './tables/webhooks.js';
import type { OutboundTables } from './tables/outbound.js';
import type { SubmissionTables } from './tables/submission.js';
import type { SieveTables } from './tables/sieve-store.js';

/**
 * The whole database as Kysely sees it: the foundation's tables plus each capability's. A
 * capability declares its own tables in `src/db/tables/<capability>.ts` (below every capability, so every store may import them) and adds them to this
 * intersection.
 */
export type Database = CoreTables & RecipientTables & MailboxTables & IngestTables & EmailTables & WebhookTables & OutboundTables & SubmissionTables & SieveTables;
