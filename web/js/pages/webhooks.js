// Webhooks: register (the signing secret is shown once), turn on or off, rotate the secret, the
// delivery log with replay, delete.
import { api, get, post } from '../api.js';
import { fill, h, field, checkbox, table, uid, when } from '../dom.js';
import { explain, messages, pageTitle, shownOnce } from '../ui.js';

const EVENTS = ['email.received', 'email.read', 'email.deleted'];

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const once = h('div');
  const listArea = h('div');
  const log = h('section', { 'aria-label': 'Delivery log' });

  const url = /** @type {HTMLInputElement} */ (h('input', { type: 'url', name: 'url', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'https://example.com/hooks/mail' }));
  const events = EVENTS.map((e) => checkbox(e, { checked: true, value: e }));
  const active = checkbox('Active', { checked: true });
  const form = h('form', { class: 'card', 'aria-labelledby': 'hook-h' },
    h('h2', { id: 'hook-h' }, 'Add a webhook'),
    field('Webhook URL', url),
    h('fieldset', {}, h('legend', {}, 'Events'), events.map((e) => e.el)),
    active.el,
    h('button', { type: 'submit', class: 'primary' }, 'Create webhook'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const chosen = events.filter((e) => e.input.checked).map((e) => e.input.value);
    if (!url.value.trim() || chosen.length === 0) { msg.error('Enter a URL and choose at least one event.'); return; }
    try {
      const r = await post('/v1/webhooks', { url: url.value.trim(), events: chosen, is_active: active.input.checked });
      url.value = '';
      showSecret(`Signing secret of webhook ${r.data.id}`, r.data.secret);
      msg.info(`Webhook ${r.data.id} created.`);
      await refresh();
    } catch (e) { msg.error(e); }
  });

  /** @param {string} title @param {string} secret */
  function showSecret(title, secret) {
    fill(once, shownOnce(title, h('p', {}, h('code', { class: 'secret' }, secret))));
    /** @type {HTMLElement | null} */ (once.querySelector('h3'))?.setAttribute('tabindex', '-1');
    /** @type {HTMLElement | null} */ (once.querySelector('h3'))?.focus();
  }

  /** @param {any} w */
  async function toggle(w) {
    try { await api('PATCH', `/v1/webhooks/${w.id}`, { body: { is_active: !w.is_active } }); msg.info(`Webhook ${w.id} ${w.is_active ? 'deactivated' : 'activated'}.`); await refresh(); } catch (e) { msg.error(e); }
  }
  /** @param {any} w */
  async function rotate(w) {
    if (!confirm(`Rotate the secret of webhook ${w.id}? The old secret keeps signing for 24 hours.`)) return;
    try {
      const r = await post(`/v1/webhooks/${w.id}/rotate-secret`);
      showSecret(`New signing secret of webhook ${w.id}`, r.data.secret);
    } catch (e) { msg.error(e); }
  }
  /** @param {any} w */
  async function remove(w) {
    if (!confirm(`Delete webhook ${w.id} (${w.url}) and its queued deliveries?`)) return;
    try { await api('DELETE', `/v1/webhooks/${w.id}`); fill(log); await refresh(); } catch (e) { msg.error(e); }
  }

  /** @param {any} w */
  async function deliveries(w) {
    let r;
    try { r = await get(`/v1/webhooks/${w.id}/deliveries`, { per_page: 50 }); } catch (e) { msg.error(e); return; }
    const items = /** @type {any[]} */ (r.data ?? []);
    const id = uid('h');
    fill(log, h('h2', { id, tabindex: -1 }, `Deliveries of webhook ${w.id}`),
      items.length === 0 ? h('p', { class: 'empty' }, 'Nothing delivered yet.') :
        table(`Deliveries of webhook ${w.id}`, ['Delivery', 'Event', 'Email', 'Status', 'Attempts', 'Last attempt', 'Actions'], items.map((d) => {
          const last = d.recent_attempts?.[0];
          return [String(d.id), d.event, String(d.email_id ?? '—'), h('span', { class: `badge s-${d.status}` }, d.status), String(d.attempts),
            last ? `${when(last.attempted_at)}: ${last.status_code ?? last.error ?? '—'}${last.latency_ms != null ? ` in ${last.latency_ms} ms` : ''}` : '—',
            h('button', { type: 'button', 'aria-label': `Replay delivery ${d.id}`, onclick: () => replay(w, d) }, 'Replay')];
        })),
      h('button', { type: 'button', onclick: () => deliveries(w) }, 'Refresh deliveries'));
    /** @type {HTMLElement | null} */ (log.querySelector('h2'))?.focus();
  }
  /** @param {any} w @param {any} d */
  async function replay(w, d) {
    try { await post(`/v1/webhooks/${w.id}/deliveries/${d.id}/replay`); msg.info(`Delivery ${d.id} queued again.`); await deliveries(w); } catch (e) { msg.error(e); }
  }

  async function refresh() {
    let r;
    try { r = await get('/v1/webhooks'); } catch (e) { fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    const hooks = /** @type {any[]} */ (r.data ?? []);
    if (hooks.length === 0) { fill(listArea, h('p', { class: 'empty' }, 'No webhooks yet.')); return; }
    fill(listArea, table('Webhooks', ['ID', 'URL', 'Events', 'State', 'Last triggered', 'Actions'], hooks.map((w) => [
      String(w.id), h('code', {}, w.url), w.events.join(', '),
      h('span', { class: `badge ${w.is_active ? 's-verified' : 's-missing'}` }, w.is_active ? 'active' : 'inactive'),
      when(w.last_triggered_at),
      h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `${w.is_active ? 'Deactivate' : 'Activate'} webhook ${w.id}`, onclick: () => toggle(w) }, w.is_active ? 'Deactivate' : 'Activate'),
        h('button', { type: 'button', 'aria-label': `Rotate secret of webhook ${w.id}`, onclick: () => rotate(w) }, 'Rotate secret'),
        h('button', { type: 'button', 'aria-label': `Deliveries of webhook ${w.id}`, onclick: () => deliveries(w) }, 'Deliveries'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete webhook ${w.id}`, onclick: () => remove(w) }, 'Delete')),
    ])));
  }

  fill(main, pageTitle('Webhooks'), msg.el, once, form,
    h('section', {}, h('h2', {}, 'Webhooks'), listArea), log);
  await refresh();
}
