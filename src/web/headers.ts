/**
 * The dashboard's security headers. The policy allows only this origin for scripts, styles,
 * connections and frames, and no inline script anywhere. Images are the one exception: mail HTML is
 * shown in a sandboxed `srcdoc` frame, which inherits this policy, so remote images the reader asks
 * for can load only if the page allows them; the frame's own policy (web/js/mail-frame.js) blocks
 * them until then, and the dashboard itself references none.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // The mail frame's <style> blocks and style attributes need this inside the frame; the frame
  // inherits the page's policy, so it is granted here too. No script is ever allowed inline.
  "style-src-elem 'self' 'unsafe-inline'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data: blob: http: https:",
  "connect-src 'self'",
  "frame-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Headers on every dashboard response. */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};
