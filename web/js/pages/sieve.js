// A mailbox's vacation reply and its Sieve filters (DECISIONS.md section 19), opened from a
// mailbox row of the Mailboxes page: the vacation form, and a script editor that shows where a
// script fails to parse (line and column, the caret moved there).
import { api, get, post } from '../api.js';
import { checkbox, field, fill, h, table } from '../dom.js';
import { explain } from '../ui.js';

/** The mailbox's path below /v1/mailboxes ('@' may stand in a path segment). @param {string} address */
const base = (address) => `/v1/mailboxes/${encodeURIComponent(address).replace(/%40/g, '@')}`;
const slug = (/** @type {string} */ s) => s.replace(/[^a-z0-9]/gi, '-');

/**
 * The vacation form of `address`: on or off, subject, text, days between replies to one sender,
 * and the dates it applies between.
 * @param {string} address @param {() => void} onClose
 */
export function vacationPanel(address, onClose) {
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const enabled = checkbox('Send automatic replies', { name: 'enabled' });
  const subject = /** @type {HTMLInputElement} */ (h('input', { name: 'subject', autocomplete: 'off', placeholder: 'Auto: <their subject>' }));
  const body = /** @type {HTMLTextAreaElement} */ (h('textarea', { name: 'body', rows: 5, required: true }));
  const days = /** @type {HTMLInputElement} */ (h('input', { type: 'number', name: 'days', min: 1, max: 30, value: 7 }));
  const start = /** @type {HTMLInputElement} */ (h('input', { type: 'date', name: 'start' }));
  const end = /** @type {HTMLInputElement} */ (h('input', { type: 'date', name: 'end' }));
  const form = h('form', {},
    enabled.el,
    h('div', { class: 'row' }, field('Subject', subject, 'Empty: "Auto:" and their subject')),
    field('Reply text', body),
    h('div', { class: 'row' }, field('Days between replies to one sender', days), field('From', start, 'Optional'), field('Until', end, 'Optional')),
    h('button', { type: 'submit', class: 'primary' }, 'Save vacation'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const payload = {
      enabled: enabled.input.checked, body: body.value, days: Number(days.value || 7),
      ...(subject.value.trim() ? { subject: subject.value.trim() } : {}), start: start.value || null, end: end.value || null,
    };
    try {
      await api('PUT', `${base(address)}/vacation`, { body: payload });
      fill(status, h('p', { class: 'info' }, `Vacation of ${address} saved: ${payload.enabled ? 'on' : 'off'}.`));
    } catch (e) {
      fill(status, h('p', { class: 'error', role: 'alert' }, `Vacation of ${address}: ${explain(e)}`));
    }
  });
  // The form stays disabled until the stored reply has filled it, so nothing typed before then is
  // overwritten by the load (and a save cannot send the empty form over the stored reply).
  const controls = Array.from(form.querySelectorAll('input, textarea, button'));
  const setDisabled = (/** @type {boolean} */ off) => controls.forEach((c) => { /** @type {HTMLInputElement} */ (c).disabled = off; });
  setDisabled(true);
  void get(`${base(address)}/vacation`).then((r) => {
    const v = r.data ?? {};
    enabled.input.checked = !!v.enabled;
    subject.value = v.subject ?? '';
    body.value = v.body ?? '';
    days.value = String(v.days ?? 7);
    start.value = (v.start ?? '').slice(0, 10);
    end.value = (v.end ?? '').slice(0, 10);
  }, (e) => fill(status, h('p', { class: 'error', role: 'alert' }, explain(e)))).finally(() => setDisabled(false));
  const id = `vacation-${slug(address)}`;
  return h('section', { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, `Vacation of ${address}`), form, status,
    h('button', { type: 'button', onclick: onClose }, 'Close'));
}

/** Moves the caret of `area` to a 1-based line and column, and scrolls there. @param {HTMLTextAreaElement} area @param {number} line @param {number} column */
function caretTo(area, line, column) {
  const lines = area.value.split('\n');
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) at += lines[i].length + 1;
  at = Math.min(area.value.length, at + Math.max(0, column - 1));
  area.focus();
  area.setSelectionRange(at, at);
}

/**
 * The Sieve scripts of `address`: a list (activate, edit, delete) and an editor whose parse errors
 * are shown with their line and column.
 * @param {string} address @param {() => void} onClose
 */
export function scriptPanel(address, onClose) {
  const listArea = h('div');
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const problem = h('div');
  const name = /** @type {HTMLInputElement} */ (h('input', { name: 'script-name', required: true, autocomplete: 'off', spellcheck: 'false', value: 'main' }));
  const text = /** @type {HTMLTextAreaElement} */ (h('textarea', { name: 'script', rows: 12, spellcheck: 'false', class: 'code',
    placeholder: 'require ["fileinto"];\nif header :contains "subject" "invoice" {\n  fileinto :create "Invoices";\n}' }));
  const activate = checkbox('Make it the active script', { name: 'activate', checked: true });
  const say = (/** @type {string} */ m) => fill(status, h('p', { class: 'info' }, m));
  const fail = (/** @type {unknown} */ e) => fill(problem, h('p', { class: 'error', role: 'alert' }, explain(e)));

  async function refresh() {
    let r;
    try { r = await get(`${base(address)}/sieve`); } catch (e) { fail(e); return; }
    const scripts = r.data ?? [];
    if (scripts.length === 0) { fill(listArea, h('p', { class: 'empty' }, 'No scripts yet: mail goes to INBOX.')); return; }
    fill(listArea, table(`Filters of ${address}`, ['Name', 'Active', 'Size', 'Actions'], scripts.map((/** @type {any} */ s) => [
      s.name, s.active ? 'active' : '', `${s.size} bytes`,
      h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `Edit ${s.name}`, onclick: () => edit(s.name) }, 'Edit'),
        s.active
          ? h('button', { type: 'button', 'aria-label': `Deactivate ${s.name}`, onclick: () => run(() => post(`${base(address)}/sieve/deactivate`), `${s.name} deactivated.`) }, 'Deactivate')
          : h('button', { type: 'button', 'aria-label': `Activate ${s.name}`, onclick: () => run(() => post(`${base(address)}/sieve/${encodeURIComponent(s.name)}/activate`), `${s.name} is active.`) }, 'Activate'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${s.name}`, onclick: () => confirm(`Delete the script ${s.name}?`) && run(() => api('DELETE', `${base(address)}/sieve/${encodeURIComponent(s.name)}`), `${s.name} deleted.`) }, 'Delete')),
    ])));
  }

  /** @param {() => Promise<any>} call @param {string} done */
  async function run(call, done) {
    fill(problem);
    try { await call(); say(done); } catch (e) { fail(e); }
    await refresh();
  }

  /** @param {string} scriptName */
  async function edit(scriptName) {
    try {
      const r = await get(`${base(address)}/sieve/${encodeURIComponent(scriptName)}`);
      name.value = r.data.name;
      text.value = r.data.script;
      activate.input.checked = !!r.data.active;
      text.focus();
    } catch (e) { fail(e); }
  }

  const form = h('form', {},
    h('div', { class: 'row' }, field('Script name', name)),
    field('Sieve script', text, 'RFC 5228 with fileinto, imap4flags, vacation, reject, variables, body and more'),
    activate.el,
    h('button', { type: 'submit', class: 'primary' }, 'Save script'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    fill(problem);
    try {
      await api('PUT', `${base(address)}/sieve/${encodeURIComponent(name.value.trim())}`, { body: { script: text.value, active: activate.input.checked } });
      say(`${name.value.trim()} saved${activate.input.checked ? ' and active' : ''}.`);
    } catch (e) {
      const at = /** @type {any} */ (e).body;
      if (at && Number.isInteger(at.line)) {
        fill(problem, h('p', { class: 'error', role: 'alert' }, `Line ${at.line}, column ${at.column}: ${/** @type {any} */ (e).reason}`));
        caretTo(text, at.line, at.column);
      } else {
        fail(e);
      }
    }
    await refresh();
  });

  const id = `filters-${slug(address)}`;
  void refresh();
  return h('section', { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, `Filters of ${address}`), listArea, form, problem, status,
    h('button', { type: 'button', onclick: onClose }, 'Close'));
}
