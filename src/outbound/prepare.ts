import { readFile } from 'node:fs/promises';
import { withoutReturnPath } from '../smtp/return-path.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { BlobStore } from '../ingest/blobs.js';
import type { StoredMessage } from '../inbound/message.js';
import type { AuthResults } from '../inbound/types.js';
import type { Logger } from '../logger.js';
import { authResultsText, countReceived, dmarcRejects, headerSection, MAX_RECEIVED } from './message.js';
import { createMemo, LOOKUP_HOLD_MS } from './memo.js';
import { renderApiMessage } from './render.js';
import { DKIM_SELECTOR } from '../signing/dkim-keys.js';
import { createKeyCache } from '../signing/keys.js';
import type { SigningThread } from '../signing/sign-thread.js';
import { signForward } from '../signing/sign.js';
import type { Srs } from '../message/srs.js';
import type { DnsLookup } from '../mailauth/dns.js';
import type { OutboundRow, OutboundStore } from '../mailstore/outbound-store.js';

/** An ARC header field at the start of a line of the header section (an arriving chain, checked with DNS). */
const ARC_FIELD = /^arc-(?:seal|message-signature|authentication-results)\s*:/im;

/** A message ready to go: the envelope sender, the bytes to send, and the bytes as they were (for a DSN). */
export interface Ready {
  kind: 'ready';
  mailFrom: string;
  raw: Buffer;
  original: Buffer;
}

/** A message that is not to be sent: why, and whether its sender hears of it. */
export interface Refused {
  kind: 'refused';
  status: string;
  response: string;
  dsn: boolean;
  /** The bytes as they were, when they could be read (the DSN quotes their headers). */
  original: Buffer | null;
}

/**
 * Readies the message of a group of items (they share bytes, sender and the domain they leave
 * from). Forwards follow DECISIONS.md section 12: DMARC fail under p=reject is not forwarded (no
 * DSN), more than 30 Received: headers is a loop (5.4.6 with DSN), the envelope sender becomes SRS
 * at the alias domain and an ARC set plus a DKIM-Signature are prepended with that domain's key
 * (signed again at every try, from the same stored bytes). A bounce coming back through an SRS
 * address, a DSN and submitted mail go as they are.
 */
export function createPreparer(deps: { db: Db; store: OutboundStore; blobs: BlobStore; srs: Srs; clock: Clock; logger: Logger; hostname: string;
  /** DNS for checking an ARC chain the message arrived with. */
  lookup: DnsLookup;
  /** Signs forwards that arrived without ARC fields off the main thread (the rest are signed here: their chain is checked with `lookup`). */
  signer?: SigningThread;
}) {
  const { db, store, blobs } = deps;
  const keyFor = createKeyCache();
  const dkimKeyOf = createMemo(LOOKUP_HOLD_MS, (domain) => store.dkimKey(db, domain));

  /** The bytes of an item: its own, or its inbound message's (API mail rendered once and kept). */
  async function bytesOf(item: OutboundRow): Promise<Buffer | null> {
    if (item.message_ref !== null) return store.message(db, item.message_ref);
    if (item.inbound_id === null) return null;
    const src = await store.inboundSource(db, item.inbound_id);
    if (!src) return null;
    // On PostgreSQL (DECISIONS.md section 17) SMTP mail's bytes are always in the row; on SQLite
    // large ones are a file of the data dir.
    if (src.raw) return src.raw;
    if (src.raw_path) return readFile(blobs.rawFile(src.raw_path)).catch(() => null);
    if (src.kind !== 'api') return null;
    const message = await store.inboundMessage(db, item.inbound_id);
    if (message === null) return null;
    // `blobs` reads attachments from the `blobs` table on PostgreSQL (databaseBlobReads), from files on SQLite.
    const rendered = await renderApiMessage(JSON.parse(message) as StoredMessage, (h) => blobs.readBlob(h));
    await db.transaction().execute(async (trx) => {
      const ref = await store.putMessage(trx, rendered, deps.clock.now());
      await store.setMessageRef(trx, item.inbound_id!, ref);
    });
    return rendered;
  }

  return async (item: OutboundRow): Promise<Ready | Refused> => {
    const stored = await bytesOf(item);
    // A forwarded copy is in transit again: the Return-Path its delivery here put in front goes (DECISIONS.md section 21).
    const original = stored && item.kind === 'forward' ? withoutReturnPath(stored) : stored;
    if (!original) return { kind: 'refused', status: '5.3.0', response: '554 5.3.0 the message is no longer stored', dsn: true, original: null };
    if (item.kind !== 'forward') return { kind: 'ready', mailFrom: item.mail_from, raw: original, original };
    const auth = item.auth ? (JSON.parse(item.auth) as AuthResults) : null;
    if (item.via_domain !== null && dmarcRejects(auth)) {
      return { kind: 'refused', status: '5.7.1', response: '550 5.7.1 not forwarded: DMARC fail under a p=reject policy', dsn: false, original };
    }
    if (countReceived(original) > MAX_RECEIVED) {
      return { kind: 'refused', status: '5.4.6', response: `554 5.4.6 not forwarded: more than ${MAX_RECEIVED} Received: headers (mail loop)`, dsn: true, original };
    }
    if (item.via_domain === null) return { kind: 'ready', mailFrom: '', raw: original, original };
    const now = new Date(deps.clock.now());
    const mailFrom = deps.srs.forward(item.mail_from, item.via_domain, now);
    const pem = await dkimKeyOf(item.via_domain);
    if (!pem) return { kind: 'ready', mailFrom, raw: original, original };
    try {
      const authResults = authResultsText(auth);
      const here = () => signForward(original, { domain: item.via_domain!, selector: DKIM_SELECTOR, privateKey: keyFor(item.via_domain!, pem) }, {
        authservId: deps.hostname, authResults, now, resolver: deps.lookup as never,
      });
      if (!deps.signer || ARC_FIELD.test(headerSection(original).toString('latin1'))) return { kind: 'ready', mailFrom, raw: await here(), original };
      const head = await deps.signer.sign(original, {
        pem, domain: item.via_domain, selector: DKIM_SELECTOR, authservId: deps.hostname, authResults, now: now.getTime(),
      }).catch((err: unknown) => {
        deps.logger.warn({ err, outbound: item.id }, 'the signing thread failed; signing on the main thread');
        return null;
      });
      return { kind: 'ready', mailFrom, raw: head ? Buffer.concat([head, original]) : await here(), original };
    } catch (err) {
      // Unsigned still reaches most receivers; failing the forward for our own signing fault would not.
      deps.logger.warn({ err, outbound: item.id }, 'signing a forwarded message failed; sending it unsigned');
      return { kind: 'ready', mailFrom, raw: original, original };
    }
  };
}
export type Preparer = ReturnType<typeof createPreparer>;
