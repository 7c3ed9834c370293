/** The path prefix of variant B below /api: its operations live at /api/legacy/v1/... */
export const LEGACY_PREFIX = '/legacy/v1';

/** What every variant B operation shares: the key in body or query, and its place in the description. */
export const LEGACY_ROUTE = { keyIn: 'legacy', tags: ['legacy'], deprecated: true } as const;
