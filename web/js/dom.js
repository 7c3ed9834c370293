// Small DOM helpers. Text always goes in as text nodes (never innerHTML), so data from the API
// (subjects, addresses, reasons) cannot turn into markup.

/**
 * Creates an element. `attrs`: `on<event>` functions become listeners, booleans toggle attributes,
 * null/undefined are skipped, everything else is set as an attribute. Children: nodes, strings,
 * numbers, arrays of those; null/false are skipped.
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in el) /** @type {any} */ (el).value = value;
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/** @param {Node} parent @param {any[]} children */
function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. @param {Element} el @param {...any} children */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let seq = 0;
/** A unique id for label/aria wiring. @param {string} prefix */
export const uid = (prefix) => `${prefix}-${++seq}`;

/**
 * A labelled form control: the label names the control for assistive technology.
 * @param {string} label @param {HTMLElement} control @param {string} [hint]
 */
export function field(label, control, hint) {
  const id = control.id || (control.id = uid('f'));
  const hintEl = hint ? h('small', { id: `${id}-hint`, class: 'hint' }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/** A checkbox with its label after it. @param {string} label @param {Record<string, any>} [attrs] */
export function checkbox(label, attrs = {}) {
  const input = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', ...attrs }));
  return { input, el: h('label', { class: 'check' }, input, ' ', label) };
}

/**
 * A table; `cells` of each row are nodes or text. Wrapped so a wide table scrolls inside itself
 * on a phone instead of widening the page.
 * @param {string} caption @param {string[]} head @param {any[][]} rows
 */
export function table(caption, head, rows) {
  return h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h('table', {},
      h('caption', { class: 'sr-only' }, caption),
      h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c)))))));
}

/** Formats an ISO time for people, in their time zone. @param {string | null | undefined} iso */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * A small line icon drawn inline in the text's colour (an SVG element, so it shows on systems
 * without an emoji font, where a pictograph character is an empty box). `label` names it for
 * assistive technology; the icon is decorative to everyone else.
 * @param {string} path  the `d` of a 16 x 16 stroked path
 * @param {string} label
 */
export function icon(path, label) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [k, v] of Object.entries({ viewBox: '0 0 16 16', width: '16', height: '16', fill: 'none', stroke: 'currentColor', 'stroke-width': '1.5', 'stroke-linecap': 'round', 'stroke-linejoin': 'round', 'aria-hidden': 'true', focusable: 'false' })) svg.setAttribute(k, v);
  const d = document.createElementNS(SVG, 'path');
  d.setAttribute('d', path);
  svg.appendChild(d);
  return h('span', { class: 'icon', role: 'img', 'aria-label': label }, svg);
}

/** A paperclip, the attachment marker. */
export const PAPERCLIP = 'M13.5 7.2 8 12.7a3.4 3.4 0 0 1-4.8-4.8l5.9-5.9a2.2 2.2 0 0 1 3.1 3.1l-5.8 5.8a1 1 0 0 1-1.4-1.4l5.3-5.3';
