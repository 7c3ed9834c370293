// The inbox: filters (mailbox, folder when the API has folders, unread, dates, search), cursor
// paging, the reading pane, and new mail without a reload: GET /v1/emails/sync is polled while the
// page is open and visible (see docs/ARCHITECTURE.md, "Dashboard", for why polling).
import { get } from '../api.js';
import { fill, h, field, checkbox, icon, when, PAPERCLIP } from '../dom.js';
import { explain, messages, pageTitle } from '../ui.js';
import { folderOptions } from './inbox-folders.js';
import { mailboxOptions } from './inbox-mailboxes.js';
import { showMessage } from './message.js';

/** How often the sync endpoint is asked for changes. */
const POLL_MS = 3000;

/**
 * Whether this server's emails API has folders (DECISIONS.md section 14): its own OpenAPI
 * description (public, generated from the validating schemas) says whether the list takes `folder`.
 */
async function apiHasFolders() {
  try {
    const res = await fetch('/api/openapi.json', { cache: 'no-store', credentials: 'omit' });
    const doc = await res.json();
    const op = doc.paths?.['/api/v1/emails'] ?? doc.paths?.['/v1/emails'];
    return (op?.get?.parameters ?? []).some((/** @type {any} */ p) => p.name === 'folder' && p.in === 'query');
  } catch { return false; }
}

/** A date input's value as the ISO bound of that day (start or end) in the reader's time zone. @param {string} v @param {boolean} end */
function dayBound(v, end) {
  if (!v) return undefined;
  const d = new Date(`${v}T${end ? '23:59:59.999' : '00:00:00'}`);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** @param {HTMLElement} main */
export async function render(main) {
  const msg = messages();
  // By default the list holds the mail of every mailbox of the tenant; the selector narrows it to one.
  const mailbox = /** @type {HTMLSelectElement} */ (h('select', { name: 'mailbox' }, h('option', { value: '' }, 'All mailboxes')));
  const boxes = mailboxOptions(mailbox);
  // The standard folders, then those of IMAP's making that mail is seen in (inbox-folders.js).
  const folder = /** @type {HTMLSelectElement} */ (h('select', { name: 'folder' }));
  const folders = folderOptions(folder, mailbox);
  folders.show();
  const folderField = field('Folder', folder);
  folderField.hidden = true;
  const unread = checkbox('Unread only', { name: 'unread' });
  const since = /** @type {HTMLInputElement} */ (h('input', { type: 'date', name: 'since' }));
  const before = /** @type {HTMLInputElement} */ (h('input', { type: 'date', name: 'before' }));
  const q = /** @type {HTMLInputElement} */ (h('input', { type: 'search', name: 'q', autocomplete: 'off' }));
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
    field('Mailbox', mailbox), folderField, field('Received from', since), field('Received until', before),
    field('Search', q), unread.el, h('button', { type: 'submit' }, 'Apply'));

  const listEl = h('ul', { class: 'mail-list', 'aria-label': 'Messages' });
  const pager = h('div', { class: 'pager' });
  const pane = h('section', { class: 'pane', 'aria-label': 'Message' }, h('p', { class: 'empty' }, 'Choose a message to read it.'));
  const fresh = h('div', { role: 'status', 'aria-live': 'polite', class: 'fresh' });

  /** @type {string | undefined} */ let cursor;
  /** @type {number | null} */ let openId = null;
  let hasFolders = false;

  function query() {
    return {
      mailbox_id: mailbox.value || undefined,
      folder: hasFolders ? folder.value : undefined,
      unread: unread.input.checked ? 'true' : undefined,
      since: dayBound(since.value, false),
      before: dayBound(before.value, true),
      q: q.value.trim() || undefined,
      per_page: 25,
      cursor,
    };
  }

  /** Counts list loads: an answer that arrives after a newer request was made is dropped. */
  let loads = 0;
  async function load() {
    const mine = ++loads;
    let page;
    try { page = await get('/v1/emails', query()); } catch (e) { if (mine === loads) msg.error(e); return; }
    if (mine !== loads) return;
    msg.clear();
    fill(fresh);
    const items = /** @type {any[]} */ (page.data ?? []);
    if (!hasFolders && items.some((m) => typeof m.folder === 'string')) { hasFolders = true; folderField.hidden = false; }
    fill(listEl, items.length === 0 ? h('li', { class: 'empty' }, 'No messages here.') : items.map((m) => h('li', {},
      h('button', { type: 'button', class: `mail-item${m.is_read ? '' : ' unread'}`, 'aria-current': m.id === openId ? 'true' : null, onclick: () => open(m.id) },
        h('span', { class: 'from' }, m.is_read ? null : h('span', { class: 'sr-only' }, 'Unread: '), m.from_name || m.from_email),
        h('span', { class: 'date' }, when(m.received_at)),
        h('span', { class: 'to' }, 'to ', m.to_email),
        h('span', { class: 'subject' }, m.subject || '(no subject)', m.has_attachments ? [' ', icon(PAPERCLIP, 'with attachments')] : null),
        h('span', { class: 'snippet' }, m.snippet ?? '')))));
    fill(pager,
      page.meta?.prev_cursor ? h('button', { type: 'button', onclick: () => { cursor = page.meta.prev_cursor; load(); } }, 'Newer') : null,
      page.meta?.next_cursor ? h('button', { type: 'button', onclick: () => { cursor = page.meta.next_cursor; load(); } }, 'Older') : null);

    // In a later task, after the rows are in and painted: sorting the selector's options (the
    // first localeCompare loads the collator) need not hold up the list.
    setTimeout(() => { boxes.learn(items); folders.learn(items); }, 0);
  }

  /** @param {number} id */
  function open(id) {
    openId = id;
    for (const b of listEl.querySelectorAll('.mail-item')) b.removeAttribute('aria-current');
    showMessage(pane, id, () => load());
    load();
  }

  filters.addEventListener('submit', (ev) => { ev.preventDefault(); cursor = undefined; load(); });
  for (const el of [mailbox, folder, unread.input]) el.addEventListener('change', () => { cursor = undefined; load(); });
  // A folder no longer chosen leaves the options when the chosen mailbox has no mail in it.
  folder.addEventListener('change', () => folders.show());
  mailbox.addEventListener('change', () => {
    folders.show();
    if (hasFolders) folders.discover(() => stopped).catch((e) => { if (!stopped) msg.error(`The folders could not be read from the mail: ${explain(e)}`); });
  });

  // Live updates: the sync feed from the page's opening on. Its bound is inclusive, so items at the
  // last marker come again; they are recognised by id and marker and not counted twice.
  let syncSince = new Date(Date.now() - 60_000).toISOString();
  const seen = new Set();
  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */ let timer;
  async function poll() {
    if (stopped) return;
    if (document.visibilityState === 'visible') {
      try {
        let changed = false;
        for (let pages = 0, c; pages < 5; pages++) {
          const r = await get('/v1/emails/sync', { since: syncSince, per_page: 100, cursor: c });
          boxes.learn(r.data ?? []);
          folders.learn(r.data ?? []);
          for (const item of r.data ?? []) {
            const mark = `${item.id}@${item.updated_at}`;
            if (!seen.has(mark)) { seen.add(mark); changed = true; }
            if (item.updated_at > syncSince) syncSince = item.updated_at;
          }
          c = r.meta?.next_cursor;
          if (!c) break;
        }
        if (seen.size > 5000) seen.clear();
        if (changed && !stopped) {
          if (cursor === undefined) await load();
          else fill(fresh, h('button', { type: 'button', onclick: () => { cursor = undefined; load(); } }, 'New messages: show the newest'));
        }
      } catch { /* the next round tries again; errors show on the next explicit load */ }
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  fill(main, pageTitle('Inbox'), filters, msg.el, fresh,
    h('div', { class: 'inbox' }, h('div', { class: 'list-col' }, listEl, pager), pane));
  // The folder question and the first page go out together: without `folder` the list is the
  // server's default folder (INBOX), which is what the selector starts on, so the first page does
  // not wait for the API description (a second round trip and a large JSON parse).
  const foldered = apiHasFolders();
  await load();
  if (await foldered) { hasFolders = true; folderField.hidden = false; }
  // Not awaited: the list shows at once while earlier mail names the other mailboxes and folders.
  boxes.discover(() => stopped, (items) => folders.learn(items)).catch((e) => { if (!stopped) msg.error(`The mailboxes could not be read from the mail: ${explain(e)}`); });
  timer = setTimeout(poll, POLL_MS);
  return () => { stopped = true; clearTimeout(timer); };
}
