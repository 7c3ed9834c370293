/** One file of a tar: its path, bytes and modification time (ms). */
export interface TarFile { name: string; data: Buffer; mtime: number }

const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtime: number, type: '0' | 'x'): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(mtime / 1000)), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

/**
 * One file as POSIX tar blocks (ustar; a pax `path` record first when the name is not ASCII or is
 * longer than ustar's 100 bytes). Writing the archive a file at a time keeps memory bounded by
 * the largest file; `tarEnd` closes it.
 */
export function tarEntry(f: TarFile): Buffer[] {
  const out: Buffer[] = [];
  if (Buffer.byteLength(f.name) > 100 || /[^\x20-\x7e]/.test(f.name)) {
    const body = `path=${f.name}\n`;
    // A pax record is "<length> <key>=<value>\n" where <length> counts itself.
    let len = Buffer.byteLength(body) + 2;
    while (String(len).length + 1 + Buffer.byteLength(body) !== len) len = String(len).length + 1 + Buffer.byteLength(body);
    const record = Buffer.from(`${len} ${body}`);
    out.push(header('PaxHeader', record.length, f.mtime, 'x'), record, padding(record.length));
  }
  out.push(header(f.name.slice(0, 100).replace(/[^\x20-\x7e]/g, '_'), f.data.length, f.mtime, '0'), f.data, padding(f.data.length));
  return out;
}

/** The two empty blocks that end a tar. */
export const tarEnd = () => Buffer.alloc(BLOCK * 2);
