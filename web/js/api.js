// The dashboard's only way to the server: the public REST API under /api, with the key as a
// Bearer token. The key lives in sessionStorage (gone when the tab closes), never elsewhere.

const STORAGE_KEY = 'mailstead.apiKey';

export const session = {
  /** @returns {string | null} */
  get key() { return sessionStorage.getItem(STORAGE_KEY); },
  /** @param {string} key */
  set(key) { sessionStorage.setItem(STORAGE_KEY, key); },
  clear() { sessionStorage.removeItem(STORAGE_KEY); },
};

/** An error answer of the API: its HTTP status and the `reason` of the error contract. */
export class ApiError extends Error {
  /** @param {number} status @param {string} reason @param {any} [body] the whole error body (a Sieve script's line and column) */
  constructor(status, reason, body = null) {
    super(reason);
    this.status = status;
    this.reason = reason;
    this.body = body;
  }
}

/** Listeners told when the key stops working (401), so the shell can return to sign-in. */
const onUnauthorized = new Set();
/** @param {() => void} fn */
export const whenUnauthorized = (fn) => onUnauthorized.add(fn);

/**
 * Calls the API. `query` values that are undefined, null or '' are left out.
 * @param {string} method @param {string} path (below /api, e.g. /v1/emails)
 * `upload` sends a file as the body, with its media type (an mbox import), instead of JSON.
 * @param {{ query?: Record<string, any>, body?: any, upload?: { type: string, data: Blob }, text?: boolean, blob?: boolean, key?: string }} [o]
 */
export async function api(method, path, o = {}) {
  const url = new URL('/api' + path, location.origin);
  for (const [k, v] of Object.entries(o.query ?? {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const key = o.key ?? session.key;
  /** @type {Record<string, string>} */
  const headers = { accept: o.text || o.blob ? '*/*' : 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  /** @type {BodyInit | undefined} */
  let body;
  if (o.body !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(o.body); }
  if (o.upload) { headers['content-type'] = o.upload.type; body = o.upload.data; }
  let res;
  try {
    res = await fetch(url, { method, headers, body, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new ApiError(0, 'The server could not be reached');
  }
  if (o.text && res.ok) return res.text();
  if (o.blob && res.ok) return res.blob();
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  if (!res.ok) {
    if (res.status === 401 && !o.key) for (const fn of onUnauthorized) fn();
    throw new ApiError(res.status, (json && typeof json.reason === 'string') ? json.reason : `HTTP ${res.status}`, json);
  }
  return json;
}

export const get = (/** @type {string} */ path, /** @type {Record<string, any>} */ query = {}) => api('GET', path, { query });
export const post = (/** @type {string} */ path, /** @type {any} */ body = undefined) => api('POST', path, { body });

/**
 * Saves what a GET answers as a file named `filename`, the way a download link would; a plain link
 * cannot carry the key, so the file is fetched with it and handed to the browser as a blob.
 * @param {string} path (below /api) @param {string} filename
 */
export async function download(path, filename) {
  const blob = await api('GET', path, { blob: true });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // After the click has handed the blob to the download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls a task endpoint until the task is completed or failed (a failed task answers 422, thrown
 * as ApiError). `progress` hears each status. Bounded: about two minutes, then it gives up.
 * @param {string} path @param {number} taskId @param {(status: string) => void} [progress]
 */
export async function pollTask(path, taskId, progress) {
  const started = Date.now();
  for (let delay = 150; ; delay = Math.min(delay * 1.5, 1500)) {
    const r = await get(path, { task_id: taskId });
    progress?.(r.status);
    if (r.status === 'completed' || r.status === 'failed') return r;
    if (Date.now() - started > 120_000) throw new ApiError(0, `Task ${taskId} is still ${r.status}; look again later`);
    await sleep(delay);
  }
}
