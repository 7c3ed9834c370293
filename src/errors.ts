/** The one error type of Mailstead: an HTTP status and a human reason, rendered as {status:"error", reason}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    /** Extra response headers, such as Retry-After on 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(reason);
    this.name = 'ApiError';
  }
}

/** 422: a validation failure or a rule of the API refused the request. */
export const unprocessable = (reason: string) => new ApiError(422, reason);
/** 404: the thing does not exist in the caller's scope. */
export const notFound = (reason: string) => new ApiError(404, reason);
/** 409: the thing already exists. */
export const conflict = (reason: string) => new ApiError(409, reason);
/** 403: authenticated but not allowed. */
export const forbidden = (reason: string) => new ApiError(403, reason);
/** 401: no key, or a key we do not accept. */
export const unauthorized = (reason = 'API key invalid or missing') => new ApiError(401, reason);
/** 429: a cooldown or rate limit is in force; retryAfter in seconds. */
export const tooManyRequests = (reason: string, retryAfterSeconds: number) =>
  new ApiError(429, reason, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
