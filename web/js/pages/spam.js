// Spam allow and block lists (DECISIONS.md section 18): list, add and remove entries for the whole
// tenant or one mailbox. An allow entry counts only when the From domain authenticates.
import { api, get, post } from '../api.js';
import { fill, h, field, table } from '../dom.js';
import { explain, messages, pageTitle } from '../ui.js';

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const listArea = h('div');

  const kind = /** @type {HTMLSelectElement} */ (h('select', { name: 'kind' },
    h('option', { value: 'block' }, 'Block (always junk)'), h('option', { value: 'allow' }, 'Allow (never junk when authenticated)')));
  const pattern = /** @type {HTMLInputElement} */ (h('input', { name: 'pattern', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'user@example.com or @example.com' }));
  const mailbox = /** @type {HTMLInputElement} */ (h('input', { name: 'mailbox', type: 'email', autocomplete: 'off', spellcheck: 'false' }));
  const form = h('form', { class: 'card', 'aria-labelledby': 'spam-h' },
    h('h2', { id: 'spam-h' }, 'Add a list entry'),
    h('div', { class: 'row' },
      field('List', kind),
      field('Sender', pattern, 'An address, or @domain for the domain and its sub-domains (matched against From)'),
      field('Mailbox', mailbox, 'Empty: every mailbox of the tenant')),
    h('button', { type: 'submit', class: 'primary' }, 'Add entry'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = pattern.value.trim();
    if (!value) { msg.error('Enter an address or @domain.'); pattern.focus(); return; }
    try {
      await post('/v1/spam/lists', { kind: kind.value, pattern: value, ...(mailbox.value.trim() ? { mailbox: mailbox.value.trim() } : {}) });
      msg.info(`Added ${value} to the ${kind.value} list.`);
      pattern.value = '';
      await refresh();
    } catch (e) { msg.error(e); }
  });

  /** @param {any} entry */
  async function remove(entry) {
    if (!confirm(`Remove ${entry.pattern} from the ${entry.kind} list?`)) return;
    try {
      await api('DELETE', `/v1/spam/lists/${entry.id}`);
      msg.info(`Removed ${entry.pattern}.`);
      await refresh();
    } catch (e) { msg.error(e); }
  }

  async function refresh() {
    let entries;
    try { entries = (await get('/v1/spam/lists')).data ?? []; } catch (e) { fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    if (entries.length === 0) { fill(listArea, h('p', { class: 'empty' }, 'No allow or block entries yet.')); return; }
    fill(listArea, table('Allow and block lists', ['List', 'Sender', 'Mailbox', 'Actions'], entries.map((/** @type {any} */ e) => [
      h('span', { class: `badge ${e.kind === 'allow' ? 's-pass' : 's-fail'}` }, e.kind),
      e.pattern,
      e.mailbox ?? 'every mailbox',
      h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${e.pattern} from the ${e.kind} list`, onclick: () => remove(e) }, 'Remove'),
    ])));
  }

  fill(main, pageTitle('Spam'), msg.el, form, h('section', {}, h('h2', {}, 'Lists'), listArea));
  await refresh();
}
