const folderName = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\x00-\\x1f\\x7f*%]+$' } as const;

/** POST /v1/mailboxes/{email}/import with a JSON body: an IMAP source (DECISIONS.md section 20). */
export const importBody = {
  type: 'object',
  required: ['source', 'host', 'username', 'password'],
  additionalProperties: false,
  properties: {
    source: { type: 'string', enum: ['imap'] },
    host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]_-]+$' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    security: { type: 'string', enum: ['tls', 'starttls', 'none'] },
    tls_verify: { type: 'boolean' },
    username: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    folders: { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: folderName },
  },
} as const;
export interface ImportBody {
  source: 'imap'; host: string; port?: number; security?: 'tls' | 'starttls' | 'none'; tls_verify?: boolean;
  username: string; password: string; folders?: string[];
}

/** ?folder= of an mbox upload (default INBOX). */
export const importQuery = {
  type: 'object',
  properties: { folder: folderName },
} as const;
export interface ImportQuery { folder?: string }
