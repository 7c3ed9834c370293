/**
 * Makes web/favicon.ico from web/favicon.svg: Debian's Chromium draws the SVG at 32 x 32 and 16 x 16
 * on a transparent background, and the two PNGs go into one ICO file (an ICO may hold PNG images;
 * every browser since 2010 reads them). /favicon.ico is what browsers, feed readers and bookmark
 * tools ask for when a page names no icon; the dashboard's page names the SVG.
 * Not a test: run it by hand after the SVG changes (node --import tsx scripts/favicon.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/helpers/browser.js';

const SVG = new URL('../web/favicon.svg', import.meta.url);
const ICO = new URL('../web/favicon.ico', import.meta.url);
const SIZES = [32, 16];

const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
try {
  const svg = readFileSync(SVG, 'utf8');
  const pngs: Buffer[] = [];
  for (const size of SIZES) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    await page.setContent(`<body style="margin:0">${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body>`);
    pngs.push(await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } }));
    await page.close();
  }
  // ICONDIR (6 bytes), one ICONDIRENTRY (16 bytes) per image, then the images (little-endian).
  const header = Buffer.alloc(6 + 16 * pngs.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(pngs.length, 4);
  let offset = header.length;
  pngs.forEach((png, i) => {
    const at = 6 + 16 * i;
    header.writeUInt8(SIZES[i]!, at); // width
    header.writeUInt8(SIZES[i]!, at + 1); // height
    header.writeUInt8(0, at + 2); // no palette
    header.writeUInt8(0, at + 3);
    header.writeUInt16LE(1, at + 4); // colour planes
    header.writeUInt16LE(32, at + 6); // bits per pixel
    header.writeUInt32LE(png.length, at + 8);
    header.writeUInt32LE(offset, at + 12);
    offset += png.length;
  });
  writeFileSync(ICO, Buffer.concat([header, ...pngs]));
  process.stderr.write(`web/favicon.ico ${offset} bytes\n`);
} finally {
  await browser.close();
}
