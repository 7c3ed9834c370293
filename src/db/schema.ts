import type { CoreTables, RecipientTables } from './types.js';
import type { MailboxTables } from '../mailboxes/tables.js';
import type { IngestTables } from '../ingest/tables.js';
import type { EmailTables } from '../emails/tables.js';
import type { WebhookTables } from '../webhooks/tables.js';
import type { OutboundTables } from '../outbound/tables.js';
import type { SubmissionTables } from '../submission/tables.js';
import type { SieveTables } from '../sieve-store/tables.js';

/**
 * The whole database as Kysely sees it: the foundation's tables plus each capability's. A
 * capability declares its own tables in `src/<capability>/tables.ts` and adds them to this
 * intersection.
 */
export type Database = CoreTables & RecipientTables & MailboxTables & IngestTables & EmailTables & WebhookTables & OutboundTables & SubmissionTables & SieveTables;
