import type { Generated } from 'kysely';

/** One accepted submission: its mailbox and recipient count, for the rolling daily limit. */
export interface SubmissionSendsTable {
  id: Generated<number>;
  mailbox_id: number;
  recipients: number;
  at: number;
}

/** The tables of submission. */
export interface SubmissionTables {
  submission_sends: SubmissionSendsTable;
}
