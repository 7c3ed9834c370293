/** A task whose data still holds plain passwords; the redaction sweep removes the row once done. */
export interface PasswordRedactionsTable {
  task_id: number;
}

/** The tables of the mailboxes capability beyond the shared recipient tables. */
export interface MailboxTables {
  password_redactions: PasswordRedactionsTable;
}
