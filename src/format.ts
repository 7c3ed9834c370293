/** Date and size formats that SPEC.md fixes for its fields. */

const pad = (n: number) => String(n).padStart(2, '0');

/** `DD-MM-YYYY` in UTC, as in list entries' created_at. */
export function ddmmyyyy(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as in mailbox create results. */
export function sqlDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** ISO 8601 with milliseconds, in UTC. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
