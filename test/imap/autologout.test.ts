import test from 'ava';
import { AUTOLOGOUT_MS, createImapListeners } from '../../src/imap/protocol/server.js';
import type { Mailstore } from '../../src/imap/mailstore.js';
import { RecentClaims } from '../../src/imap/recent.js';
import { createLogger } from '../../src/logger.js';
import { startTestApp } from '../helpers/app.js';
import { rawImap } from '../helpers/imap.js';

test('a session idle past the autologout time gets BYE and is closed (30 minutes in the server; shortened here)', async (t) => {
  t.is(AUTOLOGOUT_MS, 30 * 60_000);
  const app = await startTestApp(t);
  const listeners = createImapListeners({
    host: '127.0.0.1', port: 0, starttlsPort: null, tls: app.app.tls, logger: createLogger('silent'), timeoutMs: 500,
    deps: { store: {} as Mailstore, logger: createLogger('silent'), commands: new Map(), claim: () => true, release: () => undefined, idle: app.app.imap.idle, recent: new RecentClaims() },
  });
  const { imapPort } = await listeners.listen();
  t.teardown(() => listeners.close());
  const c = await rawImap(t, imapPort!);
  await c.until(/^\* BYE autologout/, 15_000);
  for (let i = 0; i < 250 && !c.closed; i++) await new Promise((r) => setTimeout(r, 20));
  t.true(c.closed);
});
