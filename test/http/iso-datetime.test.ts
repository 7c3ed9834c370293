import test from 'ava';
import { isIsoDateTime } from '../../src/http/iso-datetime.js';

test('ISO 8601 date-times are accepted with Z or an offset, seconds and fraction optional', (t) => {
  for (const v of ['2024-01-31T12:00:00Z', '2024-01-31T12:00Z', '2024-02-29T00:00:00Z', '2000-02-29T23:59:59.123456789+02:00', '2024-01-31T12:00:00+0100', '2024-12-31T23:59:59-11:30']) {
    t.true(isIsoDateTime(v), v);
  }
});

test('dates and times outside the calendar are refused, not rolled over', (t) => {
  for (const v of [
    '2025-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2025-02-30T00:00:00Z', '2025-04-31T00:00:00Z', '2024-13-01T00:00:00Z',
    '2024-00-10T00:00:00Z', '2024-01-00T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T23:60:00Z', '2024-01-01T23:59:60Z',
    '2024-01-01T00:00:00+24:00', '2024-01-01T00:00:00+05:60', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00', '2024-01-01', 'yesterday',
  ]) {
    t.false(isIsoDateTime(v), v);
  }
});
