import { unprocessable } from '../errors.js';
import { ALLOW_PRIVATE_HINT, RefusedTargetError, checkedAddresses } from './guard.js';
import type { HostLookup } from './resolve.js';

/** Longest accepted webhook URL. */
export const MAX_URL_LENGTH = 2048;

/**
 * The registration half of the SSRF guard (DECISIONS.md section 9): an absolute https URL without
 * credentials whose host is a public address or a name whose every address is public. With
 * `allowPrivate` (MAILSTEAD_WEBHOOK_ALLOW_PRIVATE) http and any address pass and DNS is not asked.
 * Returns the URL as it will be stored (normalised by the WHATWG parser, fragment dropped).
 */
export async function checkWebhookUrl(raw: string, { allowPrivate, lookup }: { allowPrivate: boolean; lookup: HostLookup }): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw unprocessable('url must be a valid absolute URL');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw unprocessable(allowPrivate ? 'url must use https or http' : `url must use https (${ALLOW_PRIVATE_HINT})`);
  if (url.username || url.password) throw unprocessable('url must not contain credentials');
  if (!url.hostname) throw unprocessable('url must have a host');
  url.hash = '';
  if (url.href.length > MAX_URL_LENGTH) throw unprocessable(`url must be at most ${MAX_URL_LENGTH} characters`);
  if (allowPrivate) return url.href;
  try {
    await checkedAddresses(url.hostname, lookup);
  } catch (err) {
    if (err instanceof RefusedTargetError) {
      throw unprocessable(`url must not point to a loopback, private, link-local, metadata or other non-public address (${err.message}; ${ALLOW_PRIVATE_HINT})`);
    }
    throw unprocessable(`url host ${url.hostname} could not be resolved`);
  }
  return url.href;
}
