/** The path prefix of variant B below /api: its operations live at /api/legacy/v1/... */
export const LEGACY_PREFIX = '/legacy/v1';

/**
 * What every variant B operation shares: the key in body or query, its place in the description,
 * and a small body limit, since a body carrying the key is read before anyone is authenticated
 * (the largest legitimate body, ten sub-domain labels, is well under 2 KB).
 */
export const LEGACY_ROUTE = { keyIn: 'legacy', tags: ['legacy'], deprecated: true, bodyLimit: 64 * 1024 } as const;
