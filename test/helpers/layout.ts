import type { Locator, Page } from 'playwright-core';

/** How far the page scrolls sideways (0 when it fits). */
export const sideScroll = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/**
 * Where the text of the table cells under `table` (th and td) breaks a line inside a word, measured
 * on the line boxes: each character's box is taken from a Range, and two neighbouring characters
 * with no white space between them that sit on different lines are a break inside a word. Each is
 * described (the cell's text and the two characters) for the failure message; empty when none.
 * Text nodes are taken one by one (a word never spans two in the dashboard).
 */
export function midWordBreaks(table: Locator): Promise<string[]> {
  return table.evaluate((root) => {
    const doc = root.ownerDocument;
    const broken: string[] = [];
    for (const cell of root.querySelectorAll('th, td')) {
      const walker = doc.createTreeWalker(cell, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = (node as unknown as { data: string }).data;
        let previous: { ch: string; top: number } | null = null;
        for (let i = 0; i < text.length; i++) {
          const ch = text[i]!;
          if (/\s/.test(ch)) { previous = null; continue; }
          const range = doc.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const box = range.getClientRects()[0];
          if (!box) continue;
          if (previous && box.top > previous.top + box.height / 2) broken.push(`${JSON.stringify((cell.textContent ?? '').trim().slice(0, 60))} between ${JSON.stringify(previous.ch)} and ${JSON.stringify(ch)}`);
          previous = { ch, top: box.top };
        }
      }
    }
    return broken;
  });
}

/**
 * The header cells under `table` whose text does not fit on one line in the cell (more than one line
 * box, or wider than the cell), by their text; empty when every header reads on one line.
 */
export function crowdedHeaders(table: Locator): Promise<string[]> {
  return table.evaluate((root) => [...root.querySelectorAll('th')].filter((th) => {
    const range = root.ownerDocument.createRange();
    range.selectNodeContents(th);
    const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    return lines.size > 1 || th.scrollWidth > th.clientWidth;
  }).map((th) => th.textContent ?? ''));
}
