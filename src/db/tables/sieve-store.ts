import type { Generated } from 'kysely';

/** One Sieve script of a mailbox (DECISIONS.md section 19). */
export interface SieveScriptsTable {
  id: Generated<number>;
  mailbox_id: number;
  name: string;
  script: string;
  /** Bytes of the script in UTF-8 (the 64 KB limit, HAVESPACE, the REST `size`). */
  size: number;
  active: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** The vacation reply of the REST endpoint, apart from the scripts. */
export interface VacationSettingsTable {
  mailbox_id: number;
  enabled: number;
  subject: string | null;
  body: string;
  days: number;
  /** ISO dates (YYYY-MM-DD or a full ISO date-time), inclusive bounds. */
  start_date: string | null;
  end_date: string | null;
  updated_at: number;
}

/** When the next vacation reply from a mailbox to a sender may go (per handle). */
export interface VacationRepliesTable {
  mailbox_id: number;
  sender: string;
  handle: string;
  until_at: number;
}

/** The tables of Sieve storage and vacation. */
export interface SieveTables {
  sieve_scripts: SieveScriptsTable;
  vacation_settings: VacationSettingsTable;
  vacation_replies: VacationRepliesTable;
}
