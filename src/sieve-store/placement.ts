/** A folder name a script may file into: printable, not a wildcard, at most 255 characters; `inbox` in any case is INBOX. */
export function folderName(name: string): string | null {
  const n = name.trim();
  // eslint-disable-next-line no-control-regex
  if (n.length === 0 || n.length > 255 || /[\u0000-\u001f\u007f*%]/.test(n)) return null;
  return n.toUpperCase() === 'INBOX' ? 'INBOX' : n;
}

/** Flags a copy may carry: system flags other than \Recent, and keywords of atom characters. */
export function cleanFlags(flags: readonly string[]): string[] {
  const out = new Set<string>();
  for (const f of flags) {
    for (const one of f.split(/\s+/)) {
      if (!one) continue;
      const sys = /^\\(seen|answered|flagged|deleted|draft)$/i.exec(one);
      if (sys) out.add(`\\${sys[1]![0]!.toUpperCase()}${sys[1]!.slice(1).toLowerCase()}`);
      else if (/^[^\\(){%*"\]\s\u0000-\u001f\u007f]{1,64}$/.test(one)) out.add(one);
    }
  }
  return [...out];
}
