import { OverQuotaError } from '../../emails/folders/index.js';
import { encodeNulParts } from './append-binary.js';
import { folderNamed } from './mailboxes.js';
import { formatSet } from '../protocol/parser.js';
import { ImapNo, type CommandSpec } from '../protocol/session.js';
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
      // MULTIAPPEND (RFC 3502): one or more messages, each with its own flags and date.
      const messages: Array<{ raw: Buffer; flags: string[]; date: number }> = [];
      while (p.maybeSp()) {
        let flags: string[] = [];
        if (p.peek() === 0x28) { flags = readFlags(p); p.sp(); }
        let date = Date.now();
        if (p.peek() === 0x22) { date = p.dateTime(); p.sp(); }
        const binary = p.peek() === 0x7e;
        const raw = p.literal();
        messages.push({ raw: binary ? encodeNulParts(raw) : raw, flags, date });
      }
      p.end();
      if (messages.length === 0) p.fail('message');
      const f = await folderNamed(s, name).catch(() => { throw new ImapNo('no such folder', 'TRYCREATE'); });
      if (messages.some((m) => m.raw.length === 0)) throw new ImapNo('empty message', 'CANNOT');
      // Every message is parsed before the first is stored, so a message that cannot be read stores none.
      const inputs = [];
      for (const m of messages) inputs.push(await s.store.parseAppend(Buffer.from(m.raw), m.flags, m.date));
      const uids: number[] = [];
      try {
        for (const input of inputs) uids.push(await s.store.messages.append(s.login!.tenantId, s.login!.mailboxId, f.name, input));
      } catch (err) {
        if (err instanceof OverQuotaError) throw new ImapNo(`mailbox is over its quota${uids.length ? ` (${uids.length} of ${inputs.length} stored)` : ''}`, 'OVERQUOTA');
        throw err;
      }
      await s.finish(tag, `[APPENDUID ${f.id} ${formatSet(uids)}] APPEND completed`);
    },
  },
};
