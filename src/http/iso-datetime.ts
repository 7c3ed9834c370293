const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/;

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/**
 * Whether text is an ISO 8601 date-time we accept (date, `T`, hours and minutes, optional seconds
 * and fraction, `Z` or an offset), with every part in its calendar range. `Date.parse` alone is not
 * enough: it rolls 2025-02-30 over to March 2nd instead of refusing it.
 */
export function isIsoDateTime(text: string): boolean {
  const m = ISO_DATETIME.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second = 0, offHour = 0, offMinute = 0] = m.slice(1).map((part) => (part === undefined ? undefined : Number(part)));
  if (month! < 1 || month! > 12) return false;
  const days = month === 2 && isLeap(year!) ? 29 : MONTH_DAYS[month! - 1];
  return day! >= 1 && day! <= days && hour! <= 23 && minute! <= 59 && second <= 59 && offHour <= 23 && offMinute <= 59
    && !Number.isNaN(Date.parse(text));
}
