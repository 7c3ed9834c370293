import type { CommandSpec } from '../protocol/session.js';

/**
 * IDLE (RFC 2177 / RFC 9051 6.3.13): announces new, changed and removed mail of the selected
 * folder as it happens, whatever face caused it (SMTP delivery, the REST API, other sessions), until
 * the client sends DONE. The idle watch (idle-watch.ts) wakes the session: at once for a change
 * committed in this process, on its poll for one made elsewhere.
 */
export const idleCommands: Record<string, CommandSpec> = {
  IDLE: {
    states: ['auth', 'selected'],
    async run(s, tag, p) {
      p.end();
      s.send('+ idling');
      let stopped = false;
      let running: Promise<void> | null = null;
      let again = false;
      // One look at a time; a wake-up during a look makes one more (it may be about a later change).
      const look = () => {
        if (stopped || !s.view || !s.login) return;
        if (running) { again = true; return; }
        running = (async () => {
          try {
            do {
              again = false;
              await s.update(true);
            } while (again && !stopped);
          } catch (err) {
            s.deps.logger.warn({ err }, 'imap idle update failed');
          } finally {
            running = null;
          }
        })();
      };
      const login = s.login!;
      const unwatch = s.deps.idle.watch({
        tenantId: login.tenantId,
        mailboxId: login.mailboxId,
        marker: () => s.view?.marker ?? null,
        wake: look,
      });
      try {
        // Changes between the last command and IDLE are announced now, not at the next one.
        look();
        const line = await s.waitLine();
        stopped = true;
        unwatch();
        // The tagged answer's own update follows a look under way, never runs beside it.
        await running;
        if (s.isClosed) return;
        if (line.trim().toUpperCase() !== 'DONE') { s.send(`${tag} BAD DONE expected`); return; }
        await s.finish(tag, 'IDLE terminated');
      } finally {
        stopped = true;
        unwatch();
      }
    },
  },
};
