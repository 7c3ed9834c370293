// RFC 5260 date parts: dates of header fields (RFC 5322 syntax) and the current date, shifted to a zone.

export interface ZonedDate { utc: number; offset: number /* minutes east of UTC */ }

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const NAMED_ZONES: Record<string, number> = {
  UT: 0, GMT: 0, Z: 0, EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420,
};
export const DATE_PARTS = new Set(['year', 'month', 'day', 'date', 'julian', 'hour', 'minute', 'second', 'time', 'iso8601', 'std11', 'zone', 'weekday']);

/** "+hhmm"/"-hhmm" to minutes, or null. */
export function parseZone(text: string): number | null {
  const m = /^([+-])([0-9]{2})([0-9]{2})$/.exec(text.trim());
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  if (Number(m[3]) > 59) return null;
  return m[1] === '-' ? -minutes : minutes;
}

export function parseRfc5322Date(text: string): ZonedDate | null {
  const m = /^\s*(?:[A-Za-z]{3}\s*,\s*)?([0-9]{1,2})\s+([A-Za-z]{3})\s+([0-9]{2,4})\s+([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?\s*([+-][0-9]{4}|[A-Za-z]{1,5})?/.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[2].toLowerCase());
  if (month < 0) return null;
  let year = Number(m[3]);
  if (m[3].length === 2) year += year < 50 ? 2000 : 1900;
  else if (m[3].length === 3) year += 1900;
  const [day, hour, minute, second] = [Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  let offset = 0;
  if (m[7]) offset = parseZone(m[7]) ?? NAMED_ZONES[m[7].toUpperCase()] ?? 0;
  const utc = Date.UTC(year, month, day, hour, minute, second) - offset * 60000;
  return { utc, offset };
}

const pad = (n: number, w = 2): string => String(Math.abs(n)).padStart(w, '0');
function zoneText(offset: number, colon = false): string {
  return (offset < 0 ? '-' : '+') + pad(Math.floor(Math.abs(offset) / 60)) + (colon ? ':' : '') + pad(Math.abs(offset) % 60);
}

/** The named part of a date seen in its own zone (offset minutes), or null for an unknown part. */
export function datePart(d: ZonedDate, part: string): string | null {
  const t = new Date(d.utc + d.offset * 60000);
  const [Y, M, D, h, m, s] = [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()];
  const date = `${pad(Y, 4)}-${pad(M)}-${pad(D)}`;
  const time = `${pad(h)}:${pad(m)}:${pad(s)}`;
  switch (part.toLowerCase()) {
    case 'year': return pad(Y, 4);
    case 'month': return pad(M);
    case 'day': return pad(D);
    case 'date': return date;
    case 'julian': return String(Math.floor((d.utc + d.offset * 60000) / 86400000) + 40587);
    case 'hour': return pad(h);
    case 'minute': return pad(m);
    case 'second': return pad(s);
    case 'time': return time;
    case 'iso8601': return `${date}T${time}${zoneText(d.offset, true)}`;
    case 'std11': return `${DAYS[t.getUTCDay()]}, ${D} ${MONTHS[M - 1][0].toUpperCase()}${MONTHS[M - 1].slice(1)} ${pad(Y, 4)} ${time} ${zoneText(d.offset)}`;
    case 'zone': return zoneText(d.offset);
    case 'weekday': return String(t.getUTCDay());
    default: return null;
  }
}

export function localOffset(at: number): number {
  return -new Date(at).getTimezoneOffset();
}
