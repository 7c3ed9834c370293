// The options of the inbox's "Mailbox" selector, learnt from the mail itself. Every list and sync
// item carries `mailbox_id` and `to_email`; the entries of GET /v1/list/mailbox carry no id (SPEC.md
// fixes their fields), so the mail is the one place that pairs an address with the id that
// GET /v1/emails?mailbox_id= filters by. A mailbox without mail has nothing to filter and no option.
import { get } from '../api.js';
import { h } from '../dom.js';

/** Pages (of 100 items) of the sync feed walked at start; later mail adds its mailbox as it is seen. */
const DISCOVERY_PAGES = 20;
/** Addresses named in one option: an alias or catch-all can deliver one mailbox many addresses. */
const LABEL_ADDRESSES = 3;
/** Addresses remembered per mailbox, so a catch-all cannot grow the map without bound. */
const KEPT_ADDRESSES = 20;
/** The start of the sync feed: its `since` is a lower bound on update markers. */
const BEGINNING = new Date(0).toISOString();

/** @param {Set<string>} addresses */
function labelOf(addresses) {
  const sorted = [...addresses].sort((a, b) => a.localeCompare(b));
  const named = sorted.slice(0, LABEL_ADDRESSES).join(', ');
  return sorted.length > LABEL_ADDRESSES ? `${named} and ${sorted.length - LABEL_ADDRESSES} more` : named;
}

/**
 * Keeps `select` (whose first option is "All mailboxes") offering one option per mailbox seen in
 * mail, valued by mailbox_id and labelled by the addresses its mail was sent to, in label order.
 * @param {HTMLSelectElement} select
 */
export function mailboxOptions(select) {
  /** @type {Map<number, Set<string>>} mailbox_id -> the to_email addresses of its mail */
  const known = new Map();

  /** @param {number} id */
  function show(id) {
    const value = String(id);
    const label = labelOf(/** @type {Set<string>} */ (known.get(id)));
    const wasSelected = select.value === value;
    [...select.options].find((o) => o.value === value)?.remove();
    // Inserted by label order after "All mailboxes"; a chosen mailbox stays chosen.
    const after = [...select.options].slice(1).find((o) => o.text.localeCompare(label) > 0);
    select.insertBefore(h('option', { value }, label), after ?? null);
    if (wasSelected) select.value = value;
  }

  return {
    /**
     * Takes list or sync items; tombstones (deleted mail) carry no address and are passed over.
     * @param {any[]} items
     */
    learn(items) {
      for (const item of items) {
        if (typeof item?.mailbox_id !== 'number' || typeof item.to_email !== 'string' || item.to_email === '') continue;
        let addresses = known.get(item.mailbox_id);
        if (!addresses) known.set(item.mailbox_id, (addresses = new Set()));
        if (addresses.has(item.to_email) || addresses.size >= KEPT_ADDRESSES) continue;
        addresses.add(item.to_email);
        show(item.mailbox_id);
      }
    },

    /**
     * Walks the sync feed from its beginning, at most DISCOVERY_PAGES pages, learning every item;
     * `also` hears each page too (the Folder selector learns from the same walk).
     * @param {() => boolean} stopped  true once the page has been left
     * @param {(items: any[]) => void} [also]
     */
    async discover(stopped, also) {
      let cursor;
      for (let page = 0; page < DISCOVERY_PAGES && !stopped(); page++) {
        const r = await get('/v1/emails/sync', { since: BEGINNING, per_page: 100, cursor });
        if (stopped()) return;
        this.learn(r.data ?? []);
        also?.(r.data ?? []);
        cursor = r.meta?.next_cursor;
        if (!cursor) return;
      }
    },
  };
}
