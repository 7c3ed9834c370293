import type { CommandSpec } from './session.js';

/** How often an idling session looks for changes: well inside the 1 s DECISIONS.md section 14 allows. */
export const IDLE_POLL_MS = 200;

/**
 * IDLE (RFC 2177 / RFC 9051 6.3.13): announces new, changed and removed mail of the selected
 * folder as it happens, whatever face caused it (SMTP delivery, the REST API, other sessions), by
 * watching the tenant's newest change marker, until the client sends DONE.
 */
export const idleCommands: Record<string, CommandSpec> = {
  IDLE: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.end();
      s.send('+ idling');
      let stopped = false;
      let busy = false;
      const tick = async () => {
        if (busy || stopped || !s.view || !s.login) return;
        busy = true;
        try {
          const top = await s.store.messages.highestModseq(s.login.tenantId);
          if (top > s.view.marker && !stopped) await s.update(true);
        } catch (err) {
          s.deps.logger.warn({ err }, 'imap idle poll failed');
        } finally {
          busy = false;
        }
      };
      const timer = setInterval(() => void tick(), IDLE_POLL_MS);
      try {
        const line = await s.waitLine();
        stopped = true;
        clearInterval(timer);
        if (s.isClosed) return;
        if (line.trim().toUpperCase() !== 'DONE') { s.send(`${tag} BAD DONE expected`); return; }
        await s.finish(tag, 'IDLE terminated');
      } finally {
        stopped = true;
        clearInterval(timer);
      }
    },
  },
};
