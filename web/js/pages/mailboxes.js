// Mailboxes: create one or many (generated passwords shown once), the connection settings the API
// returns (imap_credentials, and any other *_credentials such as submission) with an Apple profile
// to download, delete.
import { download, get, post } from '../api.js';
import { fill, h, field, table } from '../dom.js';
import { domainPicker, explain, messages, pageTitle, runTask, shownOnce } from '../ui.js';
import { importPanel } from './import.js';
import { scriptPanel, vacationPanel } from './sieve.js';

/** "imap_credentials" -> "IMAP", "submission_credentials" -> "Submission". @param {string} name */
const settingName = (name) => {
  const base = name.replace(/_credentials$/, '');
  return base.length <= 4 ? base.toUpperCase() : base[0].toUpperCase() + base.slice(1);
};

/** The connection settings of a list entry, whatever credentials the server includes. @param {any} entry */
function settings(entry) {
  const parts = Object.entries(entry).filter(([k, v]) => k.endsWith('_credentials') && v && typeof v === 'object')
    .map(([k, v]) => h('div', {}, h('strong', {}, `${settingName(k)}: `), `${v.host}:${v.port}${v.encryption ? ` (${v.encryption})` : ''}`));
  return parts.length ? parts : '—';
}

/**
 * A link to the mailbox's Apple configuration profile (DECISIONS.md section 21: IMAP and submission
 * set up in Apple Mail, no password inside). The link names the file for what it is; a click fetches
 * it with the key, which a plain link cannot send.
 * @param {string} address @param {ReturnType<typeof messages>} msg
 */
function appleProfile(address, msg) {
  // '@' may stand in a path segment (RFC 3986 pchar); the address reads as itself in the link.
  const path = `/v1/mailboxes/${encodeURIComponent(address).replace(/%40/g, '@')}/mobileconfig`;
  const filename = `${address}.mobileconfig`;
  return h('a', {
    href: `/api${path}`, download: filename, type: 'application/x-apple-aspen-config', class: 'profile',
    'aria-label': `Apple profile for ${address}`,
    onclick: (/** @type {Event} */ ev) => { ev.preventDefault(); download(path, filename).catch((e) => msg.error(`The profile of ${address} could not be downloaded: ${explain(e)}`)); },
  }, 'Apple profile');
}

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const once = h('div');
  const listArea = h('div');
  const importArea = h('div');
  const picker = await domainPicker(() => refresh());
  if (picker.empty) {
    fill(main, pageTitle('Mailboxes'), h('p', { class: 'empty' }, 'Add a domain first: mailboxes live on a domain.'));
    return;
  }
  const domain = () => picker.select.value;

  const fullname = /** @type {HTMLInputElement} */ (h('input', { name: 'fullname', required: true, autocomplete: 'off' }));
  const local = /** @type {HTMLInputElement} */ (h('input', { name: 'local', required: true, autocomplete: 'off', spellcheck: 'false' }));
  const password = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: 8 }));
  const single = h('form', { class: 'card', 'aria-labelledby': 'single-h' },
    h('h2', { id: 'single-h' }, 'Create a mailbox'),
    h('div', { class: 'row' },
      field('Full name', fullname),
      field('Address', local, 'The part before @; the domain is the one chosen above'),
      field('Password', password, 'At least 8 characters; leave empty to generate one')),
    h('button', { type: 'submit', class: 'primary' }, 'Create mailbox'));
  single.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const address = `${local.value.trim().toLowerCase()}@${domain()}`;
    if (!fullname.value.trim() || !local.value.trim()) { msg.error('Enter a full name and an address.'); return; }
    if (password.value && password.value.length < 8) { msg.error('A password has at least 8 characters.'); password.focus(); return; }
    const body = { Email_fullname: fullname.value.trim(), single_bulk: 'single', Domain: domain(), Params: { email_id: address, password: password.value || 0 } };
    const task = await runTask(msg, `Creating ${address}`, () => post('/v1/create/mailbox/single', body), '/v1/get/mailbox/single');
    password.value = '';
    if (!task) return;
    local.value = '';
    showPasswords(Object.entries(task.results ?? {}).map(([addr, r]) => [addr, /** @type {any} */ (r).password]));
    await refresh();
  });

  const bulkName = /** @type {HTMLInputElement} */ (h('input', { name: 'bulk-fullname', required: true, autocomplete: 'off' }));
  const count = /** @type {HTMLInputElement} */ (h('input', { type: 'number', name: 'count', min: 1, max: 100, value: '3', required: true }));
  const shared = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'shared', autocomplete: 'new-password', minlength: 8 }));
  const bulk = h('form', { class: 'card', 'aria-labelledby': 'bulk-h' },
    h('h2', { id: 'bulk-h' }, 'Create mailboxes in bulk'),
    h('div', { class: 'row' },
      field('Person\'s name', bulkName, 'Addresses are derived from it'),
      field('Number of mailboxes', count),
      field('Shared password', shared, 'Optional; empty gives each mailbox its own generated password')),
    h('button', { type: 'submit' }, 'Create mailboxes'));
  bulk.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const n = Number(count.value);
    if (!bulkName.value.trim() || !(n >= 1 && n <= 100)) { msg.error('Enter a name and a number from 1 to 100.'); return; }
    const body = { Email_fullname: bulkName.value.trim(), single_bulk: 'bulk', Domain: domain(), Params: { mailbox_no: n, password: shared.value || 0 } };
    const task = await runTask(msg, `Creating ${n} mailboxes`, () => post('/v1/create/mailbox/bulk', body), '/v1/get/mailbox/bulk');
    shared.value = '';
    if (!task) return;
    const made = Object.entries(task.results ?? {});
    if (made.length === 0) msg.info('Every one of those addresses exists already: nothing was created.');
    else showPasswords(made.map(([addr, r]) => [addr, /** @type {any} */ (r).password]));
    await refresh();
  });

  /** @param {Array<[string, string]>} rows */
  function showPasswords(rows) {
    fill(once, shownOnce('New mailboxes and their passwords',
      table('New mailbox passwords', ['Address', 'Password'], rows.map(([a, p]) => [a, h('code', { class: 'secret' }, p)]))));
    /** @type {HTMLElement | null} */ (once.querySelector('h3'))?.setAttribute('tabindex', '-1');
    /** @type {HTMLElement | null} */ (once.querySelector('h3'))?.focus();
  }

  /** @param {string} address */
  async function remove(address) {
    if (!confirm(`Delete ${address} and all its mail?`)) return;
    const task = await runTask(msg, `Deleting ${address}`, () => post('/v1/delete/mailbox/bulk', { Mailboxes: [address] }), '/v1/get/delete/mailbox/bulk');
    const outcome = task?.results?.[address];
    if (outcome && outcome.status !== 'deleted') msg.error(`${address}: ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}`);
    await refresh();
  }

  /** Shows a panel of one mailbox (import, vacation, filters; one at a time), above the list. @param {HTMLElement} panel */
  function openPanel(panel) {
    fill(importArea, panel);
    /** @type {HTMLElement | null} */ (importArea.querySelector('h2'))?.setAttribute('tabindex', '-1');
    /** @type {HTMLElement | null} */ (importArea.querySelector('h2'))?.focus();
  }

  /** Shows the import forms of one mailbox (one at a time), above the list. @param {string} address */
  function openImport(address) {
    fill(importArea, importPanel(address, () => fill(importArea)));
    /** @type {HTMLElement | null} */ (importArea.querySelector('h2'))?.setAttribute('tabindex', '-1');
    /** @type {HTMLElement | null} */ (importArea.querySelector('h2'))?.focus();
  }

  async function refresh() {
    let r;
    try { r = await get('/v1/list/mailbox', { domain: domain(), include_credentials: 1 }); } catch (e) { fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    const entries = Object.entries(r.results ?? {}).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length === 0) { fill(listArea, h('p', { class: 'empty' }, `No mailboxes on ${domain()} yet.`)); return; }
    fill(listArea, table(`Mailboxes of ${domain()}`, ['Address', 'Status', 'Quota', 'Created', 'Connection settings', 'Actions'], entries.map(([addr, m]) => [
      addr, m.provisioning_status, m.mailbox_quota === '0MB' ? 'unlimited' : m.mailbox_quota, m.created_at, [settings(m), h('div', {}, appleProfile(addr, msg))],
      h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `Import into ${addr}`, onclick: () => openImport(addr) }, 'Import'),
        h('button', { type: 'button', 'aria-label': `Vacation of ${addr}`, onclick: () => openPanel(vacationPanel(addr, () => fill(importArea))) }, 'Vacation'),
        h('button', { type: 'button', 'aria-label': `Filters of ${addr}`, onclick: () => openPanel(scriptPanel(addr, () => fill(importArea))) }, 'Filters'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${addr}`, onclick: () => remove(addr) }, 'Delete')),
    ])));
  }

  fill(main, pageTitle('Mailboxes'), picker.el, msg.el, once, single, bulk,
    h('section', {}, h('h2', {}, 'Mailboxes'), importArea, listArea));
  await refresh();
}
