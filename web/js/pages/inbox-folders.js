// The options of the inbox's "Folder" selector. Every mailbox has the five standard folders
// (DECISIONS.md section 14); any other was created by its owner over IMAP, and the public API names
// such a folder only on the mail in it: list and sync items carry `folder` (there is no endpoint that
// lists folders). So the selector offers the standard five, then every other folder seen in mail,
// by name: the chosen mailbox's, or any mailbox's while all are shown. A folder without mail would
// list nothing and has no option. The mail is learnt from the pages the inbox reads anyway (the
// walk of the sync feed, the live poll), and once per chosen mailbox from its own sync feed.
import { get } from '../api.js';
import { h } from '../dom.js';

export const STANDARD_FOLDERS = ['INBOX', 'Sent', 'Drafts', 'Trash', 'Junk'];
/** Pages (of 100 items) of one mailbox's sync feed walked when it is chosen. */
const MAILBOX_PAGES = 20;
/** The start of the sync feed: its `since` is a lower bound on update markers. */
const BEGINNING = new Date(0).toISOString();
/** Folders remembered per mailbox, so that no mailbox can grow the selector without bound. */
const KEPT_FOLDERS = 200;

/**
 * Keeps `select` offering the folders of the mailbox chosen in `mailbox` ('' for all of them).
 * @param {HTMLSelectElement} select @param {HTMLSelectElement} mailbox
 */
export function folderOptions(select, mailbox) {
  /** @type {Map<number, Set<string>>} mailbox_id -> the folders its mail was seen in, beyond the standard five */
  const known = new Map();
  /** Mailboxes whose own sync feed was walked (or is being walked). */
  const walked = new Set();

  /** The folders to offer now, in order; the chosen one stays even where no mail shows it. */
  function wanted() {
    const chosen = mailbox.value ? [known.get(Number(mailbox.value)) ?? new Set()] : [...known.values()];
    const others = new Set(chosen.flatMap((s) => [...s]));
    if (select.value && !STANDARD_FOLDERS.includes(select.value)) others.add(select.value);
    return [...STANDARD_FOLDERS, ...[...others].sort((a, b) => a.localeCompare(b))];
  }

  function show() {
    const names = wanted();
    const current = [...select.options].map((o) => o.value);
    if (names.length === current.length && names.every((n, i) => n === current[i])) return;
    const value = select.value;
    select.replaceChildren(...names.map((n) => h('option', { value: n }, n)));
    select.value = value || 'INBOX';
  }

  return {
    /**
     * Takes list or sync items (tombstones carry no folder and are passed over).
     * @param {any[]} items
     */
    learn(items) {
      let added = false;
      for (const item of items) {
        const name = item?.folder;
        if (typeof item?.mailbox_id !== 'number' || typeof name !== 'string' || name === '' || STANDARD_FOLDERS.includes(name)) continue;
        let folders = known.get(item.mailbox_id);
        if (!folders) known.set(item.mailbox_id, (folders = new Set()));
        if (folders.has(name) || folders.size >= KEPT_FOLDERS) continue;
        folders.add(name);
        added = true;
      }
      if (added) show();
    },

    /** Offers the chosen mailbox's folders (after the Mailbox selector changed). */
    show,

    /**
     * Walks the chosen mailbox's sync feed from its beginning once (at most MAILBOX_PAGES pages),
     * so that its folders show even where the walk of every mailbox's feed stopped short of them.
     * @param {() => boolean} stopped  true once the page has been left
     */
    async discover(stopped) {
      const id = Number(mailbox.value);
      if (!mailbox.value || walked.has(id)) return;
      walked.add(id);
      let cursor;
      try {
        for (let page = 0; page < MAILBOX_PAGES && !stopped(); page++) {
          const r = await get('/v1/emails/sync', { since: BEGINNING, mailbox_id: id, per_page: 100, cursor });
          if (stopped()) return;
          this.learn(r.data ?? []);
          cursor = r.meta?.next_cursor;
          if (!cursor) return;
        }
      } catch (e) {
        walked.delete(id); // the next choice of this mailbox tries again
        throw e;
      }
    },
  };
}
