// Aliases and forwarders: create (with catch-all and send-as), edit destinations, activate or
// deactivate, delete. Every change is a queued task polled to its end.
import { get, post } from '../api.js';
import { fill, h, field, checkbox, table } from '../dom.js';
import { domainPicker, explain, messages, pageTitle, runTask } from '../ui.js';

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  const listArea = h('div');
  const picker = await domainPicker(() => refresh());
  if (picker.empty) {
    fill(main, pageTitle('Aliases'), h('p', { class: 'empty' }, 'Add a domain first: aliases live on a domain.'));
    return;
  }
  const domain = () => picker.select.value;

  const local = /** @type {HTMLInputElement} */ (h('input', { name: 'alias', autocomplete: 'off', spellcheck: 'false' }));
  const goto = /** @type {HTMLInputElement} */ (h('input', { name: 'goto', required: true, autocomplete: 'off', spellcheck: 'false' }));
  const catchAll = checkbox('Catch-all (every address of the domain without a mailbox or alias)');
  const sendAs = checkbox('Destination mailboxes may send as this address');
  catchAll.input.addEventListener('change', () => { local.disabled = catchAll.input.checked; });
  const form = h('form', { class: 'card', 'aria-labelledby': 'alias-h' },
    h('h2', { id: 'alias-h' }, 'Create an alias'),
    h('div', { class: 'row' },
      field('Alias address', local, 'The part before @'),
      field('Destinations', goto, 'Addresses separated by commas; outside ones make a forwarder')),
    catchAll.el, sendAs.el,
    h('button', { type: 'submit', class: 'primary' }, 'Create alias'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const isCatchAll = catchAll.input.checked;
    if ((!isCatchAll && !local.value.trim()) || !goto.value.trim()) { msg.error('Enter an alias address (or choose catch-all) and its destinations.'); return; }
    const address = `${local.value.trim().toLowerCase()}@${domain()}`;
    const Params = {
      ...(isCatchAll ? { catch_all: true } : { address }),
      goto: goto.value.trim(),
      ...(sendAs.input.checked ? { sender_allowed: true } : {}),
    };
    const task = await runTask(msg, isCatchAll ? 'Creating the catch-all' : `Creating ${address}`, () => post('/v1/create/alias', { Domain: domain(), Params }), '/v1/get/alias');
    if (!task) return;
    local.value = ''; goto.value = '';
    await refresh();
  });

  /** @param {string} address @param {Record<string, any>} change @param {string} label */
  async function edit(address, change, label) {
    const task = await runTask(msg, label, () => post('/v1/edit/alias', { address, ...change }), '/v1/get/alias');
    if (task) await refresh();
  }

  /** An inline editor for an alias's destinations. @param {string} address @param {string[]} current @param {HTMLElement} cell */
  function openEditor(address, current, cell) {
    const input = /** @type {HTMLInputElement} */ (h('input', { value: current.join(', '), autocomplete: 'off', spellcheck: 'false' }));
    const editor = h('form', { class: 'inline-edit' }, field(`Destinations of ${address}`, input),
      h('button', { type: 'submit' }, 'Save'), h('button', { type: 'button', onclick: () => refresh() }, 'Cancel'));
    editor.addEventListener('submit', (ev) => { ev.preventDefault(); edit(address, { goto: input.value.trim() }, `Saving ${address}`); });
    fill(cell, editor);
    input.focus();
  }

  /** @param {string} address */
  async function remove(address) {
    if (!confirm(`Delete ${address}?`)) return;
    const task = await runTask(msg, `Deleting ${address}`, () => post('/v1/delete/alias/bulk', { Aliases: [address] }), '/v1/get/delete/alias/bulk');
    if (task) await refresh();
  }

  async function refresh() {
    let r;
    try { r = await get('/v1/list/alias', { domain: domain() }); } catch (e) { fill(listArea, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }
    const entries = Object.entries(r.results ?? {}).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length === 0) { fill(listArea, h('p', { class: 'empty' }, `No aliases on ${domain()} yet.`)); return; }
    fill(listArea, table(`Aliases of ${domain()}`, ['Address', 'Destinations', 'State', 'Actions'], entries.map(([addr, a]) => {
      const name = a.is_catch_all ? `catch-all ${addr}` : addr;
      const gotoCell = h('div', {}, a.goto.join(', '));
      return [
        h('span', {}, addr, a.is_catch_all ? h('span', { class: 'badge' }, ' catch-all') : null),
        gotoCell,
        h('span', { class: `badge ${a.active ? 's-verified' : 's-missing'}` }, a.active ? 'active' : 'inactive'),
        h('div', { class: 'actions' },
          h('button', { type: 'button', 'aria-label': `Edit ${name}`, onclick: () => openEditor(addr, a.goto, gotoCell) }, 'Edit'),
          h('button', { type: 'button', 'aria-label': `${a.active ? 'Deactivate' : 'Activate'} ${name}`, onclick: () => edit(addr, { active: !a.active }, `${a.active ? 'Deactivating' : 'Activating'} ${addr}`) }, a.active ? 'Deactivate' : 'Activate'),
          h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${name}`, onclick: () => remove(addr) }, 'Delete')),
      ];
    })));
  }

  fill(main, pageTitle('Aliases'), picker.el, msg.el, form,
    h('section', {}, h('h2', {}, 'Aliases'), listArea));
  await refresh();
}
