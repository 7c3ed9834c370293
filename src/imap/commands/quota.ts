import { folderNamed } from './mailboxes.js';
import { ImapNo, type CommandSpec, type Session } from '../protocol/session.js';
import { astr } from '../protocol/wire.js';

const ROOT = '""';

/** The QUOTA line of the mailbox, or null when it is unlimited (then it has no quota root). */
async function quotaLine(s: Session): Promise<string | null> {
  const q = await s.store.messages.quota(s.login!.mailboxId);
  if (q.quota_mb <= 0) return null;
  // STORAGE is in KiB (RFC 9208); "<n>MB" is n x 1,024 KiB (DECISIONS.md section 14).
  return `* QUOTA ${ROOT} (STORAGE ${Math.ceil(q.used_bytes / 1024)} ${q.quota_mb * 1024})`;
}

/** QUOTA (RFC 9208): one root "" for the whole mailbox when it has a quota. */
export const quotaCommands: Record<string, CommandSpec> = {
  GETQUOTAROOT: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.sp();
      const name = p.mailbox();
      p.end();
      const f = await folderNamed(s, name);
      const line = await quotaLine(s);
      s.send(`* QUOTAROOT ${astr(f.name)}${line ? ` ${ROOT}` : ''}`);
      if (line) s.send(line);
      await s.finish(tag, 'GETQUOTAROOT completed');
    },
  },
  GETQUOTA: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.sp();
      const root = p.astring();
      p.end();
      const line = root === '' ? await quotaLine(s) : null;
      if (!line) throw new ImapNo('no such quota root', 'NONEXISTENT');
      s.send(line);
      await s.finish(tag, 'GETQUOTA completed');
    },
  },
  SETQUOTA: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.rest();
      void tag;
      throw new ImapNo('quotas are set through the API', 'NOPERM');
    },
  },
};
