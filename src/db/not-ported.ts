import { ApiError } from '../errors.js';

/**
 * The answer of a part that runs on SQLite only so far, on PostgreSQL (issue 36 ports the stores
 * one by one): 501 Not Implemented through the API's error contract, and a message that names the
 * part, so an operator knows it is the database mode and not a fault.
 */
export function notPorted(what: string): ApiError {
  return new ApiError(501, `${what} is not yet ported to PostgreSQL (MAILSTEAD_DATABASE_URL); it runs on SQLite`);
}
