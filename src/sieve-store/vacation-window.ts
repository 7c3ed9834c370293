/** Whether a vacation with these ISO bounds (dates are whole UTC days, inclusive) is on at `now`. */
export function vacationActive(start: string | null, end: string | null, now: number): boolean {
  if (start) {
    const s = Date.parse(start.length === 10 ? `${start}T00:00:00Z` : start);
    if (!Number.isNaN(s) && now < s) return false;
  }
  if (end) {
    const e = Date.parse(end.length === 10 ? `${end}T23:59:59.999Z` : end);
    if (!Number.isNaN(e) && now > e) return false;
  }
  return true;
}
