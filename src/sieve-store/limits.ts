/** Redirects one message may cause (DECISIONS.md section 19); more are ignored and logged. */
export const MAX_REDIRECTS = 4;
