/** Which filter gives verdicts (DECISIONS.md section 18). */
export type SpamFilterMode = 'builtin' | 'rspamd' | 'off';

const MODES: readonly SpamFilterMode[] = ['builtin', 'rspamd', 'off'];

/**
 * MAILSTEAD_SPAM_FILTER (default builtin). Read from the environment where it is used: the storage
 * thread, where verdicts are given, inherits the process's environment. Anything else is refused
 * at start (app.ts calls this once on the main thread).
 */
export function spamFilterMode(env: NodeJS.ProcessEnv = process.env): SpamFilterMode {
  const v = (env.MAILSTEAD_SPAM_FILTER ?? '').trim().toLowerCase() || 'builtin';
  if (!(MODES as readonly string[]).includes(v)) throw new Error(`MAILSTEAD_SPAM_FILTER must be one of ${MODES.join(', ')}, not "${v}"`);
  return v as SpamFilterMode;
}

/** MAILSTEAD_JUNK_RETENTION_DAYS (default 30; 0 keeps junk forever). */
export function junkRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  const raw = (env.MAILSTEAD_JUNK_RETENTION_DAYS ?? '').trim();
  if (raw === '') return 30;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`MAILSTEAD_JUNK_RETENTION_DAYS must be a number of days >= 0, not "${raw}"`);
  return n;
}
