/** Which filter gives verdicts (MAILSTEAD_SPAM_FILTER, config.ts; DECISIONS.md section 18). */
export type SpamFilterMode = 'builtin' | 'rspamd' | 'off';
