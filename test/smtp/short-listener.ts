import type { ExecutionContext } from 'ava';
import { createRecipientCheck } from '../../src/smtp/recipients.js';
import { createSmtpListener, type ListenerLimits } from '../../src/smtp/server.js';
import { startTestApp } from '../helpers/app.js';
import { provision } from '../helpers/smtp.js';

// The app's own listener uses minutes-long timeouts; this one is built from the same real parts
// (resolver, ingest) with short ones, so the timeouts can be watched.
export async function shortListener(t: ExecutionContext, limits: Partial<ListenerLimits> = { idleTimeoutMs: 400, dataTimeoutMs: 1_500, closeGraceMs: 500 }) {
  const app = await startTestApp(t);
  const { key } = await provision(app, 'slow.test', ['snail']);
  const ingest = app.app.emails.ingest;
  const listener = createSmtpListener({
    config: app.config, logger: app.app.logger, clock: app.app.clock, tls: app.app.tls,
    checkRecipient: createRecipientCheck({ resolve: app.app.aliases.resolve, quota: null, maxRecipients: 1 }),
    accept: (d) => ingest.acceptRaw(d),
    overQuota: (ids, size) => ingest.overQuota(ids, size),
    limits,
  });
  const port = await listener.listen();
  t.teardown(() => listener.close());
  return { app, key, port };
}

