// mailauth's DMARC record lookup (with its organisational-domain fallback), which it ships without
// types. dmarc.ts asks it first, so mail whose From domain publishes no reject policy costs no
// pre-acceptance verification.
declare module 'mailauth/lib/dmarc/get-dmarc-record.js' {
  /** The record's tags (p, sp, pct...), `rr` its text, `isOrgRecord` when found at the organisational domain. */
  export interface DmarcRecord { p?: string; sp?: string; pct?: number; rr: string; isOrgRecord: boolean; [tag: string]: unknown }
  type Lookup = (name: string, rrtype: string) => Promise<string[][] | string[]>;
  /** Resolves false when the domain (and its organisational domain) publish no single DMARC record; rejects on DNS failures. */
  function getDmarcRecord(domain: string, resolver: Lookup): Promise<DmarcRecord | false>;
  export default getDmarcRecord;
}
