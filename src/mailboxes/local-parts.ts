/** Letters that NFKD does not decompose into an ASCII base letter, and their usual transliteration. */
const FOLD_MAP: Record<string, string> = {
  ø: 'o', Ø: 'O', æ: 'ae', Æ: 'AE', œ: 'oe', Œ: 'OE', ß: 'ss', ẞ: 'SS', ł: 'l', Ł: 'L',
  đ: 'd', Đ: 'D', ð: 'd', Ð: 'D', þ: 'th', Þ: 'TH', ı: 'i', ħ: 'h', Ħ: 'H', ŧ: 't', Ŧ: 'T',
  ŋ: 'n', Ŋ: 'N', ĸ: 'k', ſ: 's', ƒ: 'f', ə: 'e', Ə: 'E',
};
const FOLD_CHARS = new RegExp(`[${Object.keys(FOLD_MAP).join('')}]`, 'g');

/** Longest word kept, so that "first.last" plus a three-digit counter stays within 64 characters. */
const MAX_WORD = 28;

/** ASCII-folds text: compatibility decomposition, combining marks removed, a few letters mapped. */
export function foldAscii(text: string): string {
  return text.replace(FOLD_CHARS, (c) => FOLD_MAP[c]).normalize('NFKD').replace(/\p{M}+/gu, '');
}

/** The words of a display name as local-part material: lower-case [a-z0-9] with inner hyphens. */
export function nameWords(fullname: string): string[] {
  return foldAscii(fullname).toLowerCase()
    .replace(/['’‘`´]/g, '') // O'Brien is one word: obrien
    .split(/[\s.,;:_/\\|&+()[\]{}"<>@]+/)
    .map((w) => w.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, MAX_WORD).replace(/-+$/, ''))
    .filter((w) => w.length > 0);
}

/**
 * The first `count` local parts derived from a display name (DECISIONS.md section 5). For
 * "Ann Lee Smith": ann.smith, annsmith, a.smith, ann, asmith, ann_smith, smith.ann, ann.s, then
 * ann.smith1, ann.smith2, ... (middle names are left out). A one-word name gives the word, then the
 * word with 1, 2, ... Returns null when the name has no letters or digits to work with.
 */
export function localPartCandidates(fullname: string, count: number): string[] | null {
  const words = nameWords(fullname);
  if (words.length === 0) return null;
  const first = words[0];
  const last = words[words.length - 1];
  const base = words.length === 1 ? first : `${first}.${last}`;
  const patterns = words.length === 1 ? [first] : [
    `${first}.${last}`, `${first}${last}`, `${first[0]}.${last}`, first, `${first[0]}${last}`,
    `${first}_${last}`, `${last}.${first}`, `${first}.${last[0]}`,
  ];
  const out = [...new Set(patterns)].slice(0, count);
  for (let n = 1; out.length < count; n++) out.push(`${base}${n}`);
  return out;
}
