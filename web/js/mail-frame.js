// HTML mail, made safe to look at. The message is parsed with DOMParser (a document without a
// browsing context: nothing in it runs or loads), cleaned, and shown in an iframe with an empty
// `sandbox` (no scripts, no forms, an opaque origin) whose own Content-Security-Policy allows no
// script and, until the reader asks, no remote image. Remote images are also rewritten away, so
// they stay blocked even where a browser would not honour the frame's policy.

const DROP = 'script, iframe, frame, frameset, object, embed, applet, form, base, link, meta, noscript, template, portal, svg script';
const URL_ATTRS = ['src', 'href', 'action', 'formaction', 'background', 'poster', 'srcset', 'xlink:href', 'data'];
const REMOTE = /^\s*(https?:)?\/\//i;
const SAFE_LINK = /^\s*(https?:|mailto:|#)/i;

/**
 * Cleans a message's HTML. Returns the document text for `srcdoc` and how many remote images were
 * held back.
 * @param {string} html @param {boolean} allowRemote
 */
export function prepareHtml(html, allowRemote) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const el of doc.querySelectorAll(DROP)) el.remove();
  let blocked = 0;
  for (const el of doc.querySelectorAll('*')) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) { el.removeAttribute(attr.name); continue; }
      if (!URL_ATTRS.includes(name)) continue;
      const value = attr.value;
      if (name === 'href' && el.tagName === 'A') {
        if (!SAFE_LINK.test(value)) el.removeAttribute(attr.name);
        continue;
      }
      if (/^\s*(javascript|vbscript|file):/i.test(value)) { el.removeAttribute(attr.name); continue; }
      if (REMOTE.test(value) || name === 'srcset') {
        if (allowRemote && REMOTE.test(value)) continue;
        el.setAttribute(`data-blocked-${name}`, value);
        el.removeAttribute(attr.name);
        blocked++;
      }
    }
    if (el.tagName === 'A') { el.setAttribute('target', '_blank'); el.setAttribute('rel', 'noopener noreferrer'); }
  }
  // Styles may name remote images too (background: url(...)); the frame's policy stops those.
  const policy = doc.createElement('meta');
  policy.setAttribute('http-equiv', 'Content-Security-Policy');
  policy.setAttribute('content', `default-src 'none'; style-src 'unsafe-inline'; img-src data:${allowRemote ? ' http: https:' : ''}; font-src data:`);
  const referrer = doc.createElement('meta');
  referrer.setAttribute('name', 'referrer');
  referrer.setAttribute('content', 'no-referrer');
  doc.head.prepend(policy, referrer);
  return { srcdoc: '<!doctype html>\n' + doc.documentElement.outerHTML, blocked };
}

/**
 * The iframe for a message. `allow-popups` lets links open in a new tab (still without scripts);
 * there is no `allow-scripts` and no `allow-same-origin`.
 * @param {string} html @param {boolean} allowRemote @param {string} title
 */
export function mailFrame(html, allowRemote, title) {
  const { srcdoc, blocked } = prepareHtml(html, allowRemote);
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-popups allow-popups-to-escape-sandbox');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('title', title);
  frame.className = 'mail-html';
  frame.srcdoc = srcdoc;
  return { frame, blocked };
}
