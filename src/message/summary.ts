import { parseMime } from './mime.js';
import { bodyStructure, envelope } from './structure.js';

/**
 * What FETCH answers for a message's header sync without its bytes: RFC822.SIZE, and ENVELOPE and
 * BODYSTRUCTURE as their IMAP wire text (strings already quoted or as literals). Kept per message
 * when it is stored (table email_imap), so a full sync reads rows, not every raw message: the text
 * depends only on the bytes, which never change once stored.
 */
export interface ImapSummary {
  size: number;
  envelope: string;
  bodystructure: string;
}

/** The summary of a message's bytes (the same text FETCH gives when it parses them). */
export function imapSummary(raw: Buffer): ImapSummary {
  const mime = parseMime(raw);
  return { size: raw.length, envelope: envelope(mime), bodystructure: bodyStructure(raw, mime, true) };
}
