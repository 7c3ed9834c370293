import test from 'ava';
import { BATCH_ROWS, BUSY_WINDOW_MS, inflowDelayMs, INFLOW_DELAY_PER_BACKLOG_MS, LOADED_BATCH_ROWS, MAX_BACKLOG_MS, MAX_BURST_MS, MAX_INFLOW_BACKLOG_MS, MAX_INFLOW_DELAY_MS, pace } from '../../src/ingest/pace.js';

const idle = { lastAcceptAt: -Infinity, lastApiAcceptAt: -Infinity, busySince: null, msPerRow: 0.5, backlogMs: 0 };

test('with no mail arriving, batches are full and nothing yields', (t) => {
  t.deepEqual(pace({ ...idle, now: 1000 }), { rows: BATCH_ROWS, yielding: false, busySince: null });
});

test('while mail arrives, storage yields with small batches for up to MAX_BURST_MS, then takes full batches', (t) => {
  let busySince: number | null = null;
  const at = (now: number) => {
    const step = pace({ ...idle, now, lastAcceptAt: now - 1, busySince });
    busySince = step.busySince;
    return step;
  };
  const first = at(10_000);
  t.deepEqual(first, { rows: 16, yielding: true, busySince: 10_000 }, '8 ms of batch at 0.5 ms per row');
  t.true(at(10_000 + MAX_BURST_MS - 1).yielding, 'still within the burst window');
  t.deepEqual(at(10_000 + MAX_BURST_MS), { rows: LOADED_BATCH_ROWS, yielding: false, busySince: 10_000 }, 'sustained load: no pauses');
  // A quiet moment ends the stretch: the next arrival starts a new window.
  t.deepEqual(pace({ ...idle, now: 50_000, lastAcceptAt: 50_000 - BUSY_WINDOW_MS, busySince }), { rows: BATCH_ROWS, yielding: false, busySince: null });
  t.deepEqual(pace({ ...idle, now: 60_000, lastAcceptAt: 59_999, busySince: null }).busySince, 60_000);
});

test('API mail waits behind a batch in the storage thread, so its arrivals keep batches small even past the burst window', (t) => {
  const step = pace({ ...idle, now: 100_000, lastAcceptAt: 99_999, lastApiAcceptAt: 99_999, busySince: 100_000 - MAX_BURST_MS - 1 });
  t.deepEqual(step, { rows: 16, yielding: false, busySince: 100_000 - MAX_BURST_MS - 1 });
  t.is(pace({ ...idle, now: 0, lastAcceptAt: 0, busySince: 0, msPerRow: 10 }).rows, 4, 'never fewer than 4 rows');
});

test('while mail arrives, a backlog past MAX_BACKLOG_MS ends the yielding until it is worked down', (t) => {
  const arriving = { ...idle, now: 20_000, lastAcceptAt: 19_999, busySince: 19_000 };
  t.deepEqual(pace({ ...arriving, backlogMs: MAX_BACKLOG_MS - 1 }), { rows: 16, yielding: true, busySince: 19_000 });
  t.deepEqual(pace({ ...arriving, backlogMs: MAX_BACKLOG_MS }), { rows: LOADED_BATCH_ROWS, yielding: false, busySince: 19_000 }, 'no pauses');
  t.true(pace({ ...arriving, now: 20_500, lastAcceptAt: 20_499, backlogMs: 10 }).yielding, 'worked down: acknowledgements first again');
});

test('acknowledgements are held back only past the in-flow bound, in proportion to the excess and never beyond the cap', (t) => {
  t.true(MAX_INFLOW_BACKLOG_MS > MAX_BACKLOG_MS, 'storage stops yielding before senders are slowed');
  t.is(inflowDelayMs(0), 0);
  t.is(inflowDelayMs(MAX_INFLOW_BACKLOG_MS), 0);
  t.is(inflowDelayMs(MAX_INFLOW_BACKLOG_MS + 500), 500 * INFLOW_DELAY_PER_BACKLOG_MS);
  t.true(inflowDelayMs(MAX_INFLOW_BACKLOG_MS + 1000) > inflowDelayMs(MAX_INFLOW_BACKLOG_MS + 500));
  t.is(inflowDelayMs(MAX_INFLOW_BACKLOG_MS * 100), MAX_INFLOW_DELAY_MS);
  t.is(inflowDelayMs(Number.NaN), 0, 'no estimate, no delay');
});
