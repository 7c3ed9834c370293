import type { Migration } from 'kysely';
import * as m001 from './001_core.js';
import * as m002 from './002_mailboxes_aliases.js';
import * as m003 from './003_events.js';
import * as m004 from './004_mailboxes_extra.js';
import * as m005 from './005_emails.js';
import * as m006 from './006_webhooks.js';
import * as m007 from './007_inbound_queue_cover.js';
import * as m008 from './008_journal_state.js';
import * as m009 from './009_outbound.js';
import * as m010 from './010_folders.js';
import * as m011 from './011_submission.js';
import * as m012 from './012_imap_summary.js';
import * as m013 from './013_pg_mail.js';
import * as m014 from './014_pg_directory_notify.js';
import * as m015 from './015_pg_lz4_contents.js';
import * as m016 from './016_install_secret.js';
import * as m017 from './017_pg_keys_notify.js';
import * as m018 from './018_pg_fts_received.js';
import * as m019 from './019_inbound_set_aside.js';
import * as m023 from './023_login_attempts_pending.js';
import * as m024 from './024_spam_model.js';
import * as m025 from './025_spam_lists.js';
import * as m026 from './026_sieve_scripts.js';
import * as m027 from './027_vacation_replies.js';
import * as m028 from './028_spam_model_version.js';

/**
 * Every migration, by name; names sort in the order they run. A capability adds its own numbered
 * file and one line here (a static list, so the build needs no file-system discovery).
 */
export const migrations: Record<string, Migration> = {
  '001_core': m001,
  '002_mailboxes_aliases': m002,
  '003_events': m003,
  '004_mailboxes_extra': m004,
  '005_emails': m005,
  '006_webhooks': m006,
  '007_inbound_queue_cover': m007,
  '008_journal_state': m008,
  '009_outbound': m009,
  '010_folders': m010,
  '011_submission': m011,
  '012_imap_summary': m012,
  '013_pg_mail': m013,
  '014_pg_directory_notify': m014,
  '015_pg_lz4_contents': m015,
  '016_install_secret': m016,
  '017_pg_keys_notify': m017,
  '018_pg_fts_received': m018,
  '019_inbound_set_aside': m019,
  '023_login_attempts_pending': m023,
  '024_spam_model': m024,
  '025_spam_lists': m025,
  '026_sieve_scripts': m026,
  '027_vacation_replies': m027,
  '028_spam_model_version': m028,
};
