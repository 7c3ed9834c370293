// Importing mail into one mailbox (DECISIONS.md section 20): from an IMAP server, or an uploaded
// mbox file, with the task's progress as a bar. Opened from a mailbox row of the Mailboxes page.
import { api, get, post } from '../api.js';
import { checkbox, field, fill, h } from '../dom.js';
import { explain } from '../ui.js';

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** The mailbox address as a path segment ('@' may stand in one, RFC 3986 pchar). @param {string} address */
const importPath = (address) => `/v1/mailboxes/${encodeURIComponent(address).replace(/%40/g, '@')}/import`;

/**
 * The progress of one import task: a <progress> bar (messages done of the total) and a line of
 * counts; the error the server gave when it fails. Polls until the task ends or the panel is gone.
 * @param {HTMLElement} area @param {string} address @param {number} taskId
 */
async function follow(area, address, taskId) {
  const bar = /** @type {HTMLProgressElement} */ (h('progress', { 'aria-label': `Import into ${address}` }));
  const line = h('p', { class: 'info' }, `Import into ${address}: task ${taskId} started…`);
  const status = h('div', { role: 'status', 'aria-live': 'polite' }, line);
  fill(area, bar, status);
  for (let delay = 300; area.isConnected; delay = Math.min(delay * 1.5, 2000)) {
    let r;
    try { r = await get('/v1/get/import', { task_id: taskId }); } catch (e) { fill(status, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    const res = r.results ?? {};
    const done = (res.messages_imported ?? 0) + (res.messages_skipped ?? 0);
    // Before the source is counted the bar stays indeterminate (no value).
    if (res.messages_total > 0) { bar.max = res.messages_total; bar.value = Math.min(done, res.messages_total); }
    const counts = `${res.messages_imported ?? 0} imported, ${res.messages_skipped ?? 0} skipped of ${res.messages_total ?? 0} messages in ${res.folders ?? 0} folders`;
    if (res.status === 'completed') {
      if (!(res.messages_total > 0)) { bar.max = 1; bar.value = 1; }
      fill(status, h('p', { class: 'info' }, `Import into ${address}: `, h('strong', { class: 's-completed' }, 'completed'), ` — ${counts}`));
      return;
    }
    if (res.status === 'failed') {
      fill(status, h('p', { class: 'error', role: 'alert' }, `Import into ${address} failed: ${res.error ?? 'unknown error'} (${counts})`));
      return;
    }
    fill(line, `Import into ${address}: running — ${counts}`);
    await sleep(delay);
  }
}

/**
 * A card with the import forms for `address`; `onClose` removes it.
 * @param {string} address @param {() => void} onClose
 */
export function importPanel(address, onClose) {
  const progressArea = h('div', { class: 'import-progress' });
  const problem = h('div', { role: 'alert' });
  /** Starts the task, then follows it. @param {() => Promise<any>} start */
  async function run(start) {
    fill(problem);
    let accepted;
    try { accepted = await start(); } catch (e) { fill(problem, h('p', { class: 'error' }, `Import into ${address}: ${explain(e)}`)); return; }
    await follow(progressArea, address, accepted.task_id);
  }

  const host = /** @type {HTMLInputElement} */ (h('input', { name: 'host', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'imap.old-provider.example' }));
  const port = /** @type {HTMLInputElement} */ (h('input', { type: 'number', name: 'port', min: 1, max: 65535, placeholder: '993' }));
  const security = /** @type {HTMLSelectElement} */ (h('select', { name: 'security' },
    h('option', { value: 'tls' }, 'TLS'), h('option', { value: 'starttls' }, 'STARTTLS'), h('option', { value: 'none' }, 'None (plain text)')));
  const verify = checkbox('Verify the server\'s certificate', { name: 'tls_verify', checked: true });
  const username = /** @type {HTMLInputElement} */ (h('input', { name: 'username', required: true, autocomplete: 'off', spellcheck: 'false' }));
  const password = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'source-password', required: true, autocomplete: 'off' }));
  const folders = /** @type {HTMLInputElement} */ (h('input', { name: 'folders', autocomplete: 'off', spellcheck: 'false' }));
  const imap = h('form', {},
    h('div', { class: 'row' }, field('IMAP server', host), field('Port', port, 'Empty: 993 with TLS, 143 otherwise'), field('Security', security)),
    verify.el,
    h('div', { class: 'row' }, field('Username', username), field('Password', password, 'Used only while the import runs'),
      field('Folders', folders, 'Comma-separated; empty copies every folder')),
    h('button', { type: 'submit', class: 'primary' }, 'Start import'));
  imap.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!host.value.trim() || !username.value || !password.value) { fill(problem, h('p', { class: 'error' }, 'Enter the server, a username and a password.')); return; }
    const names = folders.value.split(',').map((f) => f.trim()).filter(Boolean);
    const body = {
      source: 'imap', host: host.value.trim(), security: security.value, tls_verify: verify.input.checked, username: username.value, password: password.value,
      ...(port.value ? { port: Number(port.value) } : {}), ...(names.length ? { folders: names } : {}),
    };
    password.value = '';
    await run(() => post(importPath(address), body));
  });

  const file = /** @type {HTMLInputElement} */ (h('input', { type: 'file', name: 'mbox', required: true, accept: '.mbox,application/mbox' }));
  const folder = /** @type {HTMLInputElement} */ (h('input', { name: 'folder', autocomplete: 'off', placeholder: 'INBOX' }));
  const upload = h('form', {},
    h('div', { class: 'row' }, field('mbox file', file), field('Into folder', folder, 'Empty: INBOX; created when missing')),
    h('button', { type: 'submit' }, 'Upload mbox'));
  upload.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) { fill(problem, h('p', { class: 'error' }, 'Choose an mbox file.')); return; }
    await run(() => api('POST', importPath(address), { query: { folder: folder.value.trim() }, upload: { type: 'application/mbox', data: chosen } }));
  });

  const id = `import-${address.replace(/[^a-z0-9]/gi, '-')}`;
  return h('section', { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, `Import mail into ${address}`),
    h('h3', {}, 'From an IMAP server'), imap,
    h('h3', {}, 'From an mbox file'), upload,
    problem, progressArea,
    h('button', { type: 'button', onclick: onClose }, 'Close'));
}
