// The outbound queue (DECISIONS.md section 12): what is queued, sent or failed, and a retry for
// queued or failed items. A server without the queue answers 404, shown as "not available".
import { ApiError, get, post } from '../api.js';
import { fill, h, field, table, when } from '../dom.js';
import { explain, messages, pageTitle } from '../ui.js';

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const listArea = h('div');
  const pager = h('div', { class: 'pager' });
  const status = /** @type {HTMLSelectElement} */ (h('select', { name: 'status' },
    h('option', { value: '' }, 'Any status'), ['queued', 'sent', 'failed'].map((s) => h('option', { value: s }, s))));
  /** @type {string | undefined} */ let cursor;
  status.addEventListener('change', () => { cursor = undefined; load(); });

  /** @param {any} item */
  async function retry(item) {
    try { await post(`/v1/outbound/${item.id}/retry`); msg.info(`Delivery to ${item.rcpt_to} is being tried again.`); await load(); } catch (e) { msg.error(e); }
  }

  async function load() {
    let page;
    try {
      page = await get('/v1/outbound', { status: status.value || undefined, cursor, per_page: 25 });
    } catch (e) {
      fill(pager);
      if (e instanceof ApiError && e.status === 404) {
        fill(listArea, h('p', { class: 'empty', role: 'status' }, 'The outbound queue is not available on this server: it does not send mail out.'));
      } else fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e)));
      return;
    }
    const items = /** @type {any[]} */ (page.data ?? []);
    fill(listArea, items.length === 0 ? h('p', { class: 'empty' }, 'Nothing in the outbound queue.') :
      table('Outbound queue', ['Recipient', 'Kind', 'Status', 'Attempts', 'Next attempt', 'Last response', 'Queued', 'Actions'], items.map((i) => [
        i.rcpt_to, i.kind, h('span', { class: `badge s-${i.status}` }, i.status), String(i.attempts), when(i.next_attempt_at),
        i.last_response ? h('code', {}, i.last_response) : '—', when(i.created_at),
        i.status === 'sent' ? '—' : h('button', { type: 'button', 'aria-label': `Retry delivery to ${i.rcpt_to}`, onclick: () => retry(i) }, 'Retry'),
      ])));
    fill(pager,
      page.meta?.prev_cursor ? h('button', { type: 'button', onclick: () => { cursor = page.meta.prev_cursor; load(); } }, 'Newer') : null,
      page.meta?.next_cursor ? h('button', { type: 'button', onclick: () => { cursor = page.meta.next_cursor; load(); } }, 'Older') : null);
  }

  fill(main, pageTitle('Outbound'), field('Status', status), msg.el, listArea, pager);
  await load();
}
