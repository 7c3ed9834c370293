import type { CommandSpec } from '../protocol/session.js';

const ENABLEABLE = new Set(['CONDSTORE', 'QRESYNC', 'IMAP4REV2']);

/** ENABLE (RFC 5161): CONDSTORE, QRESYNC (which implies CONDSTORE) and IMAP4rev2; others are ignored. */
export const enableCommands: Record<string, CommandSpec> = {
  ENABLE: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      const asked: string[] = [];
      while (p.maybeSp()) asked.push(p.atom().toUpperCase());
      p.end();
      if (asked.length === 0) p.fail('capability');
      const now: string[] = [];
      for (const c of asked) {
        if (!ENABLEABLE.has(c) || s.enabled.has(c)) continue;
        s.enabled.add(c);
        now.push(c === 'IMAP4REV2' ? 'IMAP4rev2' : c);
        if (c === 'QRESYNC' && !s.enabled.has('CONDSTORE')) s.enabled.add('CONDSTORE');
      }
      s.send(`* ENABLED${now.map((c) => ` ${c}`).join('')}`);
      await s.finish(tag, 'ENABLE completed');
    },
  },
};
