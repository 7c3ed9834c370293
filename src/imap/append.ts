import { OverQuotaError } from '../emails/folder-messages.js';
import { folderNamed } from './mailboxes.js';
import { ImapNo, type CommandSpec } from './session.js';
import { readFlags } from './store.js';

/**
 * APPEND (RFC 9051 6.3.12, UIDPLUS's APPENDUID): stores the client's bytes as given in any folder,
 * flags honoured and the date as received_at; counts toward the quota (NO [OVERQUOTA]) and fires no
 * email.received (only delivery does).
 */
export const appendCommands: Record<string, CommandSpec> = {
  APPEND: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.sp();
      const name = p.mailbox();
      p.sp();
      let flags: string[] = [];
      if (p.peek() === 0x28) { flags = readFlags(p); p.sp(); }
      let date = Date.now();
      if (p.peek() === 0x22) { date = p.dateTime(); p.sp(); }
      const raw = p.literal();
      p.end();
      const f = await folderNamed(s, name).catch(() => { throw new ImapNo('no such folder', 'TRYCREATE'); });
      if (raw.length === 0) throw new ImapNo('empty message', 'CANNOT');
      const input = await s.store.parseAppend(Buffer.from(raw), flags, date);
      let uid: number;
      try {
        uid = await s.store.messages.append(s.login!.tenantId, s.login!.mailboxId, f.name, input);
      } catch (err) {
        if (err instanceof OverQuotaError) throw new ImapNo('mailbox is over its quota', 'OVERQUOTA');
        throw err;
      }
      await s.finish(tag, `[APPENDUID ${f.id} ${uid}] APPEND completed`);
    },
  },
};
