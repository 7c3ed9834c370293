// Pieces the pages share: status messages, task progress, secrets shown once, domain pickers.
import { ApiError, get, pollTask } from './api.js';
import { fill, h, field, uid } from './dom.js';

/** What an error means for the person at the screen. @param {unknown} e */
export function explain(e) {
  if (e instanceof ApiError) {
    if (e.status === 403) return `This API key may not do that: ${e.reason}`;
    if (e.status === 429) return `Too soon: ${e.reason}`;
    return e.reason;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * A live region for one area's messages: polite for progress, assertive for errors.
 * @returns {{ el: HTMLElement, info: (m: any) => void, error: (m: any) => void, clear: () => void }}
 */
export function messages() {
  const el = h('div', { class: 'messages', role: 'status', 'aria-live': 'polite' });
  return {
    el,
    info: (m) => fill(el, h('p', { class: 'info' }, m)),
    error: (m) => fill(el, h('p', { class: 'error', role: 'alert' }, typeof m === 'string' ? m : explain(m))),
    clear: () => fill(el),
  };
}

/**
 * Runs a queued task end to end, showing its progress: enqueue, then poll until done.
 * @param {ReturnType<typeof messages>} msg @param {string} label what is being done
 * @param {() => Promise<{task_id: number}>} start @param {string} pollPath
 * @returns {Promise<any | null>} the completed poll, or null after showing the failure
 */
export async function runTask(msg, label, start, pollPath) {
  try {
    msg.info(`${label}: sending…`);
    const accepted = await start();
    const task = await pollTask(pollPath, accepted.task_id, (s) => msg.info(h('span', {}, `${label}: task ${accepted.task_id} `, h('strong', {}, s))));
    if (task.status !== 'completed') { msg.error(`${label}: task ${task.status}`); return null; }
    msg.info(`${label}: completed`);
    return task;
  } catch (e) {
    msg.error(`${label}: ${explain(e)}`);
    return null;
  }
}

/**
 * A panel for secrets the server shows only once (generated passwords, webhook secrets): they
 * live only in this panel, which goes when dismissed or when the page changes.
 * @param {string} title @param {any} content
 */
export function shownOnce(title, content) {
  const id = uid('once');
  const panel = h('section', { class: 'once', 'aria-labelledby': id },
    h('h3', { id }, title),
    h('p', {}, 'Copy it now: it is not shown again.'),
    content,
    h('button', { type: 'button', onclick: () => panel.remove() }, 'Dismiss'));
  return panel;
}

/** Every hostname of the account, sorted, with its entry. @returns {Promise<Array<[string, any]>>} */
export async function listDomains() {
  const r = await get('/v1/list/domain');
  return Object.entries(r.results ?? {}).sort(([a], [b]) => a.localeCompare(b));
}

/**
 * A "Domain" selector filled from the account's domains; remembers the choice for the tab.
 * @param {(host: string) => void} onChange
 */
export async function domainPicker(onChange, label = 'Domain') {
  const select = /** @type {HTMLSelectElement} */ (h('select', { name: 'domain' }));
  const domains = await listDomains();
  const remembered = sessionStorage.getItem('mailstead.domain');
  for (const [host] of domains) select.append(h('option', { value: host, selected: host === remembered }, host));
  select.addEventListener('change', () => { sessionStorage.setItem('mailstead.domain', select.value); onChange(select.value); });
  return { el: field(label, select), select, empty: domains.length === 0 };
}

/** A page heading that receives focus after navigation, so screen readers announce the page. @param {string} text */
export const pageTitle = (text) => h('h1', { tabindex: -1, class: 'page-title' }, text);
