// mailauth ships types for its main entry only. These are the canonicalisation and formatting
// helpers its own DKIM signer and ARC sealer are built from (lib/dkim/dkim-signer.js, lib/arc),
// used by signatures.ts to sign with a parsed key.
declare module 'mailauth/lib/tools.js' {
  /** A header field as mailauth's signers see it: lower-case name, name as written, the field's bytes (folds as CRLF). */
  export interface HeaderLine { key: string | null; casedKey: string | undefined; line: Buffer }
  export interface ParsedHeaders { parsed: HeaderLine[]; original: Buffer }
  export function parseHeaders(buf: Buffer): ParsedHeaders;
  /** The fields to sign, bottom-up (defaults to mailauth's DKIM field list) and their names for h=. */
  export function getSigningHeaderLines(parsed: HeaderLine[], fieldNames?: string, verify?: boolean): { keys: string; headers: HeaderLine[] };
  export function formatSignatureHeaderLine(type: 'DKIM' | 'ARC' | 'AS', values: Record<string, unknown>, folded: boolean): string;
  export function formatRelaxedLine(line: Buffer | string, suffix?: string): Buffer;
  /** mailauth's DKIM field list with DKIM-Signature and Delivered-To in front: what an ARC-Message-Signature covers. */
  export const defaultARCFieldNames: string;
}
declare module 'mailauth/lib/dkim/header/index.js' {
  import type { HeaderLine } from 'mailauth/lib/tools.js';
  export function generateCanonicalizedHeader(
    type: 'DKIM' | 'ARC',
    signingHeaderLines: { keys: string; headers: HeaderLine[] },
    options: Record<string, unknown>,
  ): { canonicalizedHeader: Buffer; signatureHeaderLine: string; dkimHeaderOpts: Record<string, unknown> };
}
declare module 'mailauth/lib/dkim/body/index.js' {
  export function dkimBody(canonicalization: string, hashAlgo: string, maxBodyLength: number | false): { update(chunk: Buffer): void; digest(encoding: 'base64'): string };
}
