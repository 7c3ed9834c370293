import type { Db } from '../db/connection.js';
import { DKIM_SELECTOR } from '../signing/dkim-keys.js';
import { createKeyCache } from '../signing/keys.js';
import { signDkim } from '../signing/sign.js';

/** Parsed DKIM keys by domain (a PEM that changed, a rotation, is parsed again). */
const keyFor = createKeyCache();

/**
 * A refusal or vacation reply signed with its From domain's DKIM key, as every message we send from a
 * hosted domain is (DECISIONS.md section 19; submission signs the same way). A From domain we do not
 * host (a vacation :from elsewhere) has no key here: the reply leaves unsigned, as before. Read in
 * the batch's transaction, so a domain's key is the one committed there.
 */
export async function signReply(trx: Db, raw: Buffer, fromAddress: string, now: number): Promise<Buffer> {
  const domain = fromAddress.slice(fromAddress.lastIndexOf('@') + 1).toLowerCase();
  if (!domain) return raw;
  const row = await trx.selectFrom('domains').select('dkim_private_key').where('hostname', '=', domain).executeTakeFirst();
  const pem = row?.dkim_private_key;
  if (!pem) return raw;
  return signDkim(raw, { domain, selector: DKIM_SELECTOR, privateKey: keyFor(domain, pem) }, new Date(now));
}
