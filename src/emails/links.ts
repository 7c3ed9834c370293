import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Lifetime of a signed attachment link (DECISIONS.md section 8). */
export const LINK_TTL_MS = 15 * 60 * 1000;

/** What a download link grants: one attachment of one email of one tenant, until `expires` (ms). */
export interface LinkGrant {
  tenantId: number;
  emailId: number;
  attachmentId: number;
  expires: number;
}

/** The attachment-link signing key of an install. */
export const linkKey = (secret: Buffer) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'mailstead attachment links v1', 32));

/**
 * Signs and checks download tokens `<payload>.<mac>` (both base64url): the payload names the
 * tenant, email, attachment and expiry; the MAC is HMAC-SHA256 over the payload text.
 */
export function createLinkSigner(key: Buffer) {
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    /** A token for a grant. */
    sign(g: LinkGrant): string {
      const payload = Buffer.from(`${g.tenantId}.${g.emailId}.${g.attachmentId}.${g.expires}`).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    /** The grant of an authentic token (expiry not checked here), or null for anything altered or malformed. */
    verify(token: string): LinkGrant | null {
      const m = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!m) return null;
      const given = Buffer.from(m[2], 'base64url');
      const want = mac(m[1]);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
      const fields = /^(\d{1,15})\.(\d{1,15})\.(\d{1,15})\.(\d{1,16})$/.exec(Buffer.from(m[1], 'base64url').toString('utf8'));
      if (!fields) return null;
      return { tenantId: Number(fields[1]), emailId: Number(fields[2]), attachmentId: Number(fields[3]), expires: Number(fields[4]) };
    },
  };
}
export type LinkSigner = ReturnType<typeof createLinkSigner>;

/** A Content-Disposition value that is safe for any file name (RFC 6266: ASCII fallback plus filename*). */
export function contentDisposition(filename: string): string {
  const cleaned = filename.replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim() || 'attachment';
  const ascii = cleaned.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["%;]/g, '_').replace(/\s+/g, ' ').trim() || 'attachment';
  const encoded = encodeURIComponent(cleaned).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === cleaned
    ? `attachment; filename="${ascii}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** A stored content type if it is a well-formed `type/subtype[; params]`, else application/octet-stream. */
export function safeContentType(value: string): string {
  const v = value.trim();
  return /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\r\n\\]*"|[A-Za-z0-9!#$&^_.+-]+))*$/.test(v)
    ? v : 'application/octet-stream';
}
