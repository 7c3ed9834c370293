import test from 'ava';
import { manualClock } from '../../src/clock.js';
import { createLogger } from '../../src/logger.js';
import { backoffDelay, createRenewalSchedule, renewalDueAt, type Validity } from '../../src/acme/schedule.js';
import { waitFor } from './setup.js';

const DAY = 24 * 3600 * 1000;
const policy = { renewBeforeMs: 30 * DAY, backoffFirstMs: 1000, backoffMaxMs: 8000, checkEveryMs: 20 };

test('backoff doubles from the first delay up to the maximum', (t) => {
  t.deepEqual([1, 2, 3, 4, 5, 6, 100].map((n) => backoffDelay(n, policy)), [1000, 2000, 4000, 8000, 8000, 8000, 8000]);
});

test('renewal is due 30 days before expiry, or at a third of the life of a short certificate', (t) => {
  t.is(renewalDueAt({ validFrom: 0, validTo: 90 * DAY }, policy), 60 * DAY);
  t.is(renewalDueAt({ validFrom: 0, validTo: 6 * DAY }, policy), 4 * DAY);
});

test('the schedule orders at once without a certificate, then at the renewal time of the clock; a failure waits the backoff', async (t) => {
  const clock = manualClock(1_000_000);
  let current: Validity | null = null;
  let fail = false;
  let orders = 0;
  const schedule = createRenewalSchedule({
    clock, policy, logger: createLogger('silent'),
    validity: () => current,
    async order() {
      orders += 1;
      if (fail) throw new Error('refused');
      current = { validFrom: clock.now(), validTo: clock.now() + 90 * DAY };
      return current;
    },
  });
  t.teardown(() => schedule.stop());
  schedule.start();
  await waitFor('the first order', () => orders === 1 && !schedule.status().running, 10_000);
  t.is(schedule.status().nextAttemptAt, current!.validTo - 30 * DAY);

  fail = true;
  clock.set(current!.validTo - 30 * DAY);
  await waitFor('the failed renewal', () => schedule.status().failures === 1, 10_000);
  t.is(schedule.status().nextAttemptAt, clock.now() + 1000);
  t.is(schedule.status().lastError, 'refused');
  clock.advance(1000);
  await waitFor('the second failure', () => schedule.status().failures === 2, 10_000);
  t.is(schedule.status().nextAttemptAt, clock.now() + 2000);

  fail = false;
  clock.advance(2000);
  await waitFor('the renewal', () => orders === 4 && schedule.status().failures === 0, 10_000);
  t.is(schedule.status().attempts, 4);
  await schedule.stop();
  t.is(schedule.status().nextAttemptAt, null);
});
