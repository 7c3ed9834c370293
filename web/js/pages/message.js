// The reading pane of the inbox: headers, authentication results, the spam verdict and its
// reasons, the text or HTML part, the attachments (through signed links), the raw source; "Mark as
// read", "Junk", "Not junk" (they also train the filter) and "Delete".
import { api, get, post } from '../api.js';
import { fill, h, table, when } from '../dom.js';
import { mailFrame } from '../mail-frame.js';
import { explain, messages } from '../ui.js';

/** @param {string[] | string | null | undefined} v */
const list = (v) => (Array.isArray(v) ? v.join(', ') : v || '');

/** One authentication result ("pass", "fail", ...) whatever shape the server stored. @param {any} r */
function authResult(r) {
  if (r === null || r === undefined) return 'none';
  if (typeof r === 'string') return r;
  if (typeof r === 'object') return String(r.result ?? r.status ?? JSON.stringify(r));
  return String(r);
}

/**
 * The spam verdict as section 18 of DECISIONS.md gives it: verdict, score against threshold, the
 * filter, and every reason with its score. Mail never classified (sent, imported) shows nothing.
 * @param {any} spam
 */
function spamVerdict(spam) {
  if (!spam || typeof spam !== 'object') return null;
  const junk = spam.verdict === 'junk';
  const reasons = Array.isArray(spam.reasons) ? spam.reasons : [];
  const signed = (/** @type {number} */ n) => (n > 0 ? `+${n}` : String(n));
  return h('section', { class: 'spam', 'aria-label': 'Spam verdict' },
    h('p', {},
      h('span', { class: `badge ${junk ? 's-fail' : 's-pass'}` }, junk ? 'Junk' : 'Not junk'),
      ` score ${spam.score} of ${spam.threshold} (${spam.filter} filter)`),
    reasons.length ? h('ul', { class: 'spam-reasons', 'aria-label': 'Spam reasons' }, reasons.map((/** @type {any} */ r) =>
      h('li', {}, h('code', {}, r.rule), ` ${signed(r.score)}`, r.detail ? ` — ${r.detail}` : ''))) : null);
}

/**
 * Renders one email into `pane`. `changed` is told when the email was marked read or deleted, so
 * the list can follow.
 * @param {HTMLElement} pane @param {number} id @param {(what: 'read' | 'deleted') => void} changed
 */
export async function showMessage(pane, id, changed) {
  const msg = messages();
  fill(pane, h('p', { class: 'loading' }, 'Loading the message…'));
  /** @type {any} */ let email;
  try { email = (await get(`/v1/emails/${id}`)).data; } catch (e) { fill(pane, h('p', { class: 'error', role: 'alert' }, explain(e))); return; }

  const hasText = typeof email.body_text === 'string' && email.body_text.length > 0;
  const hasHtml = typeof email.body_html === 'string' && email.body_html.length > 0;
  /** Which part is showing; the text part first when there is one. */
  let mode = hasText || !hasHtml ? 'text' : 'html';
  let remoteAllowed = false;
  const body = h('div', { class: 'mail-body' });
  const bodyTools = h('div', { class: 'actions' });

  function drawBody() {
    if (mode === 'text') {
      fill(body, h('pre', { class: 'mail-text' }, hasText ? email.body_text : '(no text part)'));
    } else {
      const { frame, blocked } = mailFrame(email.body_html, remoteAllowed, `HTML part of ${email.subject || 'the message'}`);
      fill(body, blocked > 0 && !remoteAllowed ? h('p', { class: 'info' }, `${blocked} remote image${blocked === 1 ? ' was' : 's were'} blocked.`) : null, frame);
      if (blocked > 0 && !remoteAllowed) {
        body.prepend(h('button', { type: 'button', onclick: () => { remoteAllowed = true; drawBody(); } }, 'Show remote images'));
      }
    }
    fill(bodyTools,
      hasText && hasHtml && mode === 'text' ? h('button', { type: 'button', onclick: () => { mode = 'html'; drawBody(); } }, 'HTML') : null,
      hasText && mode === 'html' ? h('button', { type: 'button', onclick: () => { mode = 'text'; drawBody(); } }, 'Text') : null);
  }

  const readButton = h('button', { type: 'button', onclick: markRead }, 'Mark as read');
  async function markRead() {
    try {
      await post(`/v1/emails/${id}/read`);
      email.is_read = true;
      readButton.remove();
      msg.info('Marked as read.');
      changed('read');
    } catch (e) { msg.error(e); }
  }
  /** Moves the message to Junk or back to INBOX, which also trains the filter. @param {'junk' | 'not-junk'} as */
  async function mark(as) {
    try {
      await post(`/v1/emails/${id}/${as}`);
      changed('read');
      // Drawn again (new folder, keywords), with the outcome in the new pane's status line.
      await showMessage(pane, id, changed);
      const status = pane.querySelector('.messages');
      if (status) fill(status, h('p', { class: 'info' }, as === 'junk' ? 'Moved to Junk; the filter learns from it.' : 'Moved to the inbox; the filter learns from it.'));
    } catch (e) { msg.error(e); }
  }
  // Where the message is decides which way it can be corrected (a rescued junk verdict stays in its record).
  const inJunk = typeof email.folder === 'string' ? email.folder === 'Junk' : email.spam?.verdict === 'junk';
  const junkButton = inJunk
    ? h('button', { type: 'button', onclick: () => mark('not-junk') }, 'Not junk')
    : h('button', { type: 'button', onclick: () => mark('junk') }, 'Junk');

  async function remove() {
    if (!confirm(`Delete “${email.subject || '(no subject)'}”?`)) return;
    try {
      await api('DELETE', `/v1/emails/${id}`);
      fill(pane, h('p', { class: 'info', role: 'status' }, 'The message was deleted.'));
      changed('deleted');
    } catch (e) { msg.error(e); }
  }

  const raw = h('pre', { class: 'raw', hidden: true, tabindex: 0, 'aria-label': 'Raw source' });
  const rawButton = h('button', { type: 'button', 'aria-expanded': 'false', onclick: async () => {
    if (!raw.hidden) { raw.hidden = true; rawButton.setAttribute('aria-expanded', 'false'); return; }
    try { fill(raw, await api('GET', `/v1/emails/${id}/raw`, { text: true })); } catch (e) { msg.error(e); return; }
    raw.hidden = false;
    rawButton.setAttribute('aria-expanded', 'true');
  } }, 'Raw source');

  /** @param {any} a */
  async function download(a) {
    try {
      const link = (await get(`/v1/emails/${id}/attachments/${a.id}`)).data;
      const anchor = h('a', { href: link.url, download: a.filename || 'attachment', rel: 'noopener noreferrer' });
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
    } catch (e) { msg.error(e); }
  }

  const auth = email.auth ?? {};
  const headerRows = [['From', email.from_name ? `${email.from_name} <${email.from_email}>` : email.from_email], ['To', email.to_email],
    email.cc?.length ? ['Cc', list(email.cc)] : null, ['Date', when(email.received_at)], email.folder ? ['Folder', email.folder] : null,
    ['Message-ID', email.message_id]].filter(Boolean);
  const allHeaders = Object.entries(email.headers ?? {}).map(([k, v]) => [k, list(v)]);
  const attachments = email.attachments ?? [];

  fill(pane,
    h('h2', { tabindex: -1, class: 'mail-subject' }, email.subject || '(no subject)'),
    h('div', { class: 'actions' }, email.is_read ? null : readButton, junkButton,
      h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete'), rawButton),
    msg.el,
    h('dl', { class: 'headers' }, headerRows.map((r) => [h('dt', {}, /** @type {any} */ (r)[0]), h('dd', {}, /** @type {any} */ (r)[1])])),
    h('p', { class: 'auth', 'aria-label': 'Authentication results' },
      ['spf', 'dkim', 'dmarc'].map((k) => h('span', { class: `badge s-${authResult(auth[k]).toLowerCase()}` }, `${k.toUpperCase()}: ${authResult(auth[k])}`))),
    spamVerdict(email.spam),
    attachments.length ? h('section', { 'aria-label': 'Attachments', class: 'attachments' }, h('h3', {}, 'Attachments'),
      h('ul', {}, attachments.map((/** @type {any} */ a) => h('li', {},
        h('button', { type: 'button', onclick: () => download(a), 'aria-label': `Download ${a.filename || 'attachment'}` }, a.filename || 'attachment'),
        ` ${a.content_type}, ${Math.max(1, Math.round(a.size / 1024))} KB`)))) : null,
    bodyTools, body,
    allHeaders.length ? h('details', {}, h('summary', {}, 'All headers'), table('All headers', ['Name', 'Value'], allHeaders)) : null,
    raw);
  drawBody();
  /** @type {HTMLElement | null} */ (pane.querySelector('.mail-subject'))?.focus();
}
