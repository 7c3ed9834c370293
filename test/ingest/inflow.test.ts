import test from 'ava';
import { createAcceptor } from '../../src/ingest/accept.js';
import { createBlobStore } from '../../src/ingest/blobs.js';
import { createJournal } from '../../src/ingest/journal.js';
import { createLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/app.js';

test('SMTP mail waits out the in-flow delay before its journal append, so its 250 comes only after both', async (t) => {
  const dir = tempDir(t);
  const journal = createJournal({ dir: `${dir}/journal`, logger: createLogger('silent') });
  await journal.open(null);
  let journaled = 0;
  // Long enough that an append (an O_DSYNC write, slow on a loaded host) never passes for the delay.
  let delay = 1000;
  let journaledAt = 0;
  // Only the SMTP path runs here: no group commit of API mail, no database, no storage thread.
  const unused = null as never;
  const acceptor = createAcceptor({
    db: unused, store: unused, resolve: unused, thread: unused, blobs: createBlobStore(dir), journal, now: () => 1_700_000_000_000,
    onCommitted: () => undefined, onJournaled: () => { journaled++; journaledAt = performance.now(); }, inflowDelayMs: () => delay,
  });
  const raw = Buffer.from('Subject: held back\r\n\r\nbody\r\n');
  const delivery = {
    raw: { chunks: [raw], length: raw.length }, size: raw.length, mailFrom: 'a@example.org', remoteAddress: '127.0.0.1', heloName: 'client.example', tls: false, receivedAt: 1_700_000_000_000,
    recipients: [{ address: 'box@held.test', resolution: { kind: 'deliver' as const, tenantId: 1, mailboxIds: [1], forwards: [] } }],
  };
  const started = performance.now();
  const accepted = acceptor.acceptRaw(delivery);
  t.is(journal.pending, 0, 'nothing is journaled while the sender is held back');
  await accepted;
  // A lower bound only: timers never fire early, however loaded the machine.
  t.true(journaledAt - started >= 995, `journaled only after the delay (${Math.round(journaledAt - started)} ms)`);
  t.is(journal.pending, 1);
  t.is(journaled, 1);
  // No backlog, no delay (how soon is the timing lane's check: test/timing/inflow.test.ts).
  delay = 0;
  await acceptor.acceptRaw(delivery);
  t.is(journal.pending, 2);
  await journal.close();
});
