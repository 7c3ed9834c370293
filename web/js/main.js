// The dashboard shell: sign-in with an API key, navigation, and one page at a time (hash routes,
// so the server serves a single document and every page is bookmarkable within the tab).
import { api, ApiError, session, whenUnauthorized } from './api.js';
import { fill, h, field } from './dom.js';
import { explain } from './ui.js';
import * as domains from './pages/domains.js';
import * as mailboxes from './pages/mailboxes.js';
import * as aliases from './pages/aliases.js';
import * as inbox from './pages/inbox.js';
import * as webhooks from './pages/webhooks.js';
import * as outbound from './pages/outbound.js';
import * as spam from './pages/spam.js';

/** @typedef {{ render: (main: HTMLElement) => (void | (() => void) | Promise<void | (() => void)>) }} Page */
/** @type {Array<[string, string, Page]>} route, navigation name, page */
const PAGES = [
  ['domains', 'Domains', domains],
  ['mailboxes', 'Mailboxes', mailboxes],
  ['aliases', 'Aliases', aliases],
  ['inbox', 'Inbox', inbox],
  ['webhooks', 'Webhooks', webhooks],
  ['outbound', 'Outbound', outbound],
  ['spam', 'Spam', spam],
];

const root = /** @type {HTMLElement} */ (document.getElementById('app'));
/** @type {(() => void) | null} */
let leavePage = null;
/** Counts navigations, so a page that finishes loading after the next one started is left at once. */
let generation = 0;

function signIn(/** @type {string} */ notice = '') {
  leave();
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'password', name: 'api-key', autocomplete: 'off', spellcheck: 'false', required: true, minlength: 32, maxlength: 32 }));
  const error = h('p', { class: 'error', role: 'alert' }, notice);
  const form = h('form', { class: 'signin card', novalidate: true },
    h('h1', {}, 'Mailstead'),
    h('p', {}, 'Sign in with an API key. It is kept only in this browser tab and sent to this server\'s API.'),
    field('API key', input),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (!/^[A-Za-z0-9]{32}$/.test(key)) { fill(error, 'An API key is 32 letters and digits.'); input.focus(); return; }
    fill(error, '');
    try {
      // Any answer but 401 means the key exists; 403 only says it lacks `read`, and the pages
      // then tell what it may not do.
      await api('GET', '/v1/list/domain', { key });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) { fill(error, 'That API key was not accepted.'); input.focus(); return; }
      if (!(e instanceof ApiError && e.status === 403)) { fill(error, explain(e)); return; }
    }
    session.set(key);
    if (!location.hash) location.hash = '#/domains';
    shell();
  });
  fill(root, h('main', { id: 'main', class: 'signin-main' }, form));
  input.focus();
}

function leave() {
  const fn = leavePage;
  leavePage = null;
  fn?.();
}

function shell() {
  const nav = h('nav', { 'aria-label': 'Main' },
    h('ul', {}, PAGES.map(([route, name]) => h('li', {}, h('a', { href: `#/${route}`, 'data-route': route }, name)))));
  const main = h('main', { id: 'main', tabindex: -1 });
  const signOut = h('button', { type: 'button', class: 'quiet', onclick: () => { session.clear(); location.hash = ''; signIn(); } }, 'Sign out');
  fill(root, h('header', { class: 'top' }, h('span', { class: 'brand' }, 'Mailstead'), nav, signOut), main);
  route(main, nav);
}

async function route(/** @type {HTMLElement} */ main, /** @type {HTMLElement} */ nav) {
  leave();
  const mine = ++generation;
  const name = location.hash.replace(/^#\/?/, '').split('/')[0] || 'domains';
  const entry = PAGES.find(([r]) => r === name) ?? PAGES[0];
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.route === entry[0]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${entry[1]} · Mailstead`;
  fill(main);
  try {
    const cleanup = await entry[2].render(main);
    if (typeof cleanup === 'function') {
      if (mine === generation) leavePage = cleanup;
      else cleanup();
    }
  } catch (e) {
    main.append(h('p', { class: 'error', role: 'alert' }, explain(e)));
  }
  if (mine === generation) /** @type {HTMLElement | null} */ (main.querySelector('.page-title'))?.focus();
}

window.addEventListener('hashchange', () => {
  const main = document.getElementById('main');
  const nav = document.querySelector('nav');
  if (session.key && main && nav) route(main, nav);
});
whenUnauthorized(() => { session.clear(); signIn('The API key is no longer accepted. Sign in again.'); });

if (session.key) shell();
else signIn();
