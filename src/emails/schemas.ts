import { idSchema, queryBoolean } from '../http/validate.js';

const datetime = { type: 'string', format: 'iso-datetime' } as const;
const perPage = { type: 'integer', minimum: 1, maximum: 100 } as const;
/** A folder's name as IMAP shows it (INBOX, Sent, ... or a user folder such as `Projects/2026`). */
const folderName = { type: 'string', minLength: 1, maxLength: 255, description: 'Folder to list (default INBOX); a folder no mailbox has lists nothing' } as const;
const cursor = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** GET /v1/emails */
export const listQuery = {
  type: 'object',
  properties: {
    mailbox_id: idSchema,
    unread: queryBoolean,
    since: datetime,
    before: datetime,
    q: { type: 'string', maxLength: 500 },
    folder: folderName,
    cursor,
    per_page: perPage,
  },
} as const;
export interface ListQuery { folder?: string; mailbox_id?: number; unread?: string; since?: string; before?: string; q?: string; cursor?: string; per_page?: number }

/** GET /v1/emails/sync */
export const syncQuery = {
  type: 'object',
  required: ['since'],
  properties: { since: datetime, cursor, per_page: perPage, mailbox_id: idSchema },
} as const;
export interface SyncQuery { since: string; cursor?: string; per_page?: number; mailbox_id?: number }

/** Path {email} */
export const emailParams = {
  type: 'object',
  required: ['email'],
  properties: { email: idSchema },
} as const;
export interface EmailParams { email: number }

/** Path {email}/attachments/{attachment} */
export const attachmentParams = {
  type: 'object',
  required: ['email', 'attachment'],
  properties: { email: idSchema, attachment: idSchema },
} as const;
export interface AttachmentParams { email: number; attachment: number }

/** Path of the signed download (checked by its signature, not by shape: anything else is a 403). */
export const downloadParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string' } },
} as const;
export interface DownloadParams { token: string }
