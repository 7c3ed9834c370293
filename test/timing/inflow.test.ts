import test from 'ava';
import { createAcceptor } from '../../src/ingest/accept.js';
import { createBlobStore } from '../../src/ingest/blobs.js';
import { createJournal } from '../../src/ingest/journal.js';
import { createLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/app.js';

// test/ingest/inflow.test.ts tests that a delay holds the journal append back; this checks that
// with no backlog (no delay) nothing is held back.
test('with no in-flow delay an SMTP message is journaled at once', async (t) => {
  const dir = tempDir(t);
  const journal = createJournal({ dir: `${dir}/journal`, logger: createLogger('silent') });
  await journal.open(null);
  const unused = null as never;
  const acceptor = createAcceptor({
    db: unused, store: unused, resolve: unused, thread: unused, blobs: createBlobStore(dir), journal, now: () => 1_700_000_000_000,
    onCommitted: () => undefined, onJournaled: () => undefined, inflowDelayMs: () => 0,
  });
  const raw = Buffer.from('Subject: not held back\r\n\r\nbody\r\n');
  const delivery = {
    raw: { chunks: [raw], length: raw.length }, size: raw.length, mailFrom: 'a@example.org', remoteAddress: '127.0.0.1', heloName: 'client.example', tls: false, receivedAt: 1_700_000_000_000,
    recipients: [{ address: 'box@held.test', resolution: { kind: 'deliver' as const, tenantId: 1, mailboxIds: [1], forwards: [] } }],
  };
  const started = performance.now();
  await acceptor.acceptRaw(delivery);
  const ms = performance.now() - started;
  t.true(ms < 995, `not held back (${Math.round(ms)} ms)`);
  t.is(journal.pending, 1);
  await journal.close();
});
