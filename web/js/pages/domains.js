// Domains: add root and sub-domains (queued tasks with progress), DNS records with their status
// (as last checked, or checked now), delete.
import { get, post } from '../api.js';
import { fill, h, field, table } from '../dom.js';
import { explain, listDomains, messages, pageTitle, runTask } from '../ui.js';

/** The DNS records of one hostname as a table. @param {string} host @param {any[]} records */
export function recordsTable(host, records) {
  return table(`DNS records of ${host}`, ['Type', 'Name', 'Value', 'Priority', 'Status'],
    records.map((r) => [r.type, h('code', {}, r.name), h('code', { class: 'wrap' }, r.value), r.priority, statusBadge(r.status)]));
}

/** @param {string} status */
const statusBadge = (status) => h('span', { class: `badge s-${String(status).toLowerCase().replace(/\s+/g, '-')}` }, status);

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const records = h('section', { 'aria-label': 'DNS records' });
  const listArea = h('div');

  const domainInput = /** @type {HTMLInputElement} */ (h('input', { name: 'domain', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'example.com', inputmode: 'url' }));
  const slots = /** @type {HTMLInputElement} */ (h('input', { type: 'number', min: 1, max: 100, name: 'slots' }));
  const addForm = h('form', { class: 'card', 'aria-labelledby': 'add-domain-h' },
    h('h2', { id: 'add-domain-h' }, 'Add a domain'),
    h('div', { class: 'row' }, field('Domain', domainInput), field('Mailbox slots', slots, 'Optional, 1 to 100')),
    h('button', { type: 'submit', class: 'primary' }, 'Add domain'));
  addForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const host = domainInput.value.trim().toLowerCase();
    if (!host) { msg.error('Enter a domain name.'); domainInput.focus(); return; }
    const body = { Domain: host, ...(slots.value ? { Params: { total_mailbox_allowed: Number(slots.value) } } : {}) };
    const task = await runTask(msg, `Adding ${host}`, () => post('/v1/create/domain', body), '/v1/get/domain');
    if (!task) return;
    domainInput.value = '';
    fill(records, h('h2', {}, `DNS records of ${task.results.domain}`), h('p', {}, 'Publish these records at your DNS provider, then check them.'), recordsTable(task.results.domain, task.results.records));
    await refresh();
  });

  const parent = /** @type {HTMLSelectElement} */ (h('select', { name: 'parent' }));
  const labels = /** @type {HTMLInputElement} */ (h('input', { name: 'labels', autocomplete: 'off', spellcheck: 'false', placeholder: 'mail, shop' }));
  const subForm = h('form', { class: 'card', 'aria-labelledby': 'add-sub-h' },
    h('h2', { id: 'add-sub-h' }, 'Add sub-domains'),
    h('div', { class: 'row' }, field('Parent domain', parent), field('Sub-domain labels', labels, 'Up to 10, separated by commas')),
    h('button', { type: 'submit' }, 'Add sub-domains'));
  subForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const subs = labels.value.split(/[\s,]+/).map((s) => s.trim().toLowerCase()).filter(Boolean);
    if (!parent.value || subs.length === 0) { msg.error('Choose a parent domain and enter at least one label.'); return; }
    const task = await runTask(msg, `Adding sub-domains of ${parent.value}`,
      () => post('/v1/create/sub-domain', { Domain: parent.value, Params: { sub_domains: subs } }), '/v1/get/sub-domain');
    if (!task) return;
    labels.value = '';
    fill(records, Object.entries(task.results.results ?? {}).map(([fqdn, r]) =>
      h('div', {}, h('h2', {}, `DNS records of ${fqdn}`), recordsTable(fqdn, /** @type {any} */ (r).records))));
    await refresh();
  });

  /** Shows one hostname's records with their status, and moves the focus to them. @param {string} host @param {string} status @param {any[]} list */
  function showRecords(host, status, list) {
    fill(records, h('h2', {}, `DNS records of ${host}`), h('p', {}, 'Domain status: ', statusBadge(status)), recordsTable(host, list));
    records.querySelector('h2')?.setAttribute('tabindex', '-1');
    /** @type {HTMLElement | null} */ (records.querySelector('h2'))?.focus();
  }

  /** The records as the last check left them, without checking again. @param {string} host */
  async function view(host) {
    try {
      const r = await get(`/v1/domains/${encodeURIComponent(host)}`);
      showRecords(host, r.data.status, r.data.records);
    } catch (e) { msg.error(e); }
  }

  /** Checks one hostname's records now and shows them. @param {string} host */
  async function check(host) {
    const task = await runTask(msg, `Checking DNS of ${host}`, () => post(`/v1/domains/${encodeURIComponent(host)}/check`), '/v1/get/domain');
    if (!task) return;
    showRecords(host, task.results.status, task.results.records);
    await refresh();
  }

  /** @param {string} host */
  async function remove(host) {
    if (!confirm(`Delete ${host} with its sub-domains, mailboxes, aliases and mail?`)) return;
    const task = await runTask(msg, `Deleting ${host}`, () => post('/v1/delete/domain/bulk', { Domains: [host] }), '/v1/get/delete/domain/bulk');
    if (!task) return;
    const outcome = task.results?.[host];
    if (outcome && outcome.status !== 'deleted') msg.error(`${host}: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}`);
    await refresh();
  }

  async function refresh() {
    let domains;
    try { domains = await listDomains(); } catch (e) { fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    const chosen = parent.value;
    const roots = domains.filter(([, d]) => d.domain_type !== 'sub');
    fill(parent, roots.map(([host]) => h('option', { value: host, selected: host === chosen }, host)));
    // Sub-domains need a root domain of the account to hang from.
    subForm.hidden = roots.length === 0;
    if (domains.length === 0) { fill(listArea, h('p', { class: 'empty' }, 'No domains yet. Add one above.')); return; }
    fill(listArea, table('Your domains', ['Domain', 'Type', 'Status', 'Mailboxes', 'Created', 'Actions'], domains.map(([host, d]) => [
      host, d.domain_type ?? '—', statusBadge(d.status), d.mailbox_count, d.created_at,
      h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `Show DNS records of ${host}`, onclick: () => view(host) }, 'Records'),
        h('button', { type: 'button', 'aria-label': `Check DNS of ${host}`, onclick: () => check(host) }, 'Check DNS'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${host}`, onclick: () => remove(host) }, 'Delete')),
    ])));
  }

  fill(main, pageTitle('Domains'), msg.el, addForm, subForm, records,
    h('section', {}, h('h2', {}, 'Your domains'), listArea));
  await refresh();
}
