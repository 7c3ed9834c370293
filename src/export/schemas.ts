const folderName = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f*%]+$' } as const;

/** GET /v1/mailboxes/{email}/export */
export const exportQuery = {
  type: 'object',
  required: ['format'],
  properties: { format: { type: 'string', enum: ['mbox', 'maildir'] }, folder: folderName },
} as const;
export interface ExportQuery { format: 'mbox' | 'maildir'; folder?: string }
