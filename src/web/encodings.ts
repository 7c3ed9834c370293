import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Asset } from './assets.js';

/** The content codings the dashboard's files are served in besides identity, best first. */
export const CODINGS = ['br', 'gzip'] as const;
export type Coding = (typeof CODINGS)[number];

/** Types worth compressing: text. Icons and the like are served as they are. */
const TEXT = /^(text\/|image\/svg\+xml)/;

/**
 * The compressed forms of one file, made on first demand and then kept: the files never change while
 * the process runs, so each is compressed at most once per coding (at the highest levels, since
 * it is done once), and only the codings a browser actually asks for cost anything. A coding that
 * does not make the file smaller is recorded as null and the file goes out as it is.
 */
export function encoder(asset: Asset) {
  const made = new Map<Coding, Buffer | null>();
  const compress = (coding: Coding): Buffer => coding === 'br'
    ? brotliCompressSync(asset.body, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length,
      },
    })
    : gzipSync(asset.body, { level: constants.Z_BEST_COMPRESSION });
  return {
    compressible: TEXT.test(asset.type),
    /** The file's bytes in `coding`, or null when that coding does not shrink it. */
    body(coding: Coding): Buffer | null {
      if (!made.has(coding)) {
        const bytes = compress(coding);
        made.set(coding, bytes.length < asset.body.length ? bytes : null);
      }
      return made.get(coding)!;
    },
  };
}
export type Encoder = ReturnType<typeof encoder>;

/**
 * The coding to send: the first of CODINGS (brotli, then gzip) that the request's Accept-Encoding
 * allows (q > 0, by name or `*`), else none. `accepts` is Koa's `ctx.acceptsEncodings`, which
 * reads the header's q-values. Among allowed codings the server's order wins over the header's:
 * RFC 9110 section 12.5.3 leaves the choice to the server, and brotli is the smaller.
 */
export function chooseCoding(accepts: (coding: string) => string | false): Coding | null {
  return CODINGS.find((c) => accepts(c) === c) ?? null;
}
