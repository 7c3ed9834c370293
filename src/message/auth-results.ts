/**
 * Authentication results of a message that came over SMTP (mailauth), stored with the email. A leaf
 * of its own: ingest stores them, the spam policy verifies them before the 250 and carries them on.
 */
export interface AuthResults {
  spf: { result: string; domain?: string | null; [k: string]: unknown } | null;
  dkim: { result: string; domains?: string[]; [k: string]: unknown } | null;
  dmarc: { result: string; policy?: string | null; [k: string]: unknown } | null;
}
