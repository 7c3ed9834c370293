import { parentPort } from 'node:worker_threads';
import { signForward } from './sign.js';
import { createKeyCache } from './keys.js';
import type { SignReply, SignRequest } from './sign-thread.js';

/**
 * The signing thread (sign-thread.ts): ARC set and DKIM-Signature of forwarded messages whose
 * arriving mail carries no ARC set (no chain to verify, so no DNS here). The RSA operations still
 * run on libuv's pool; this thread does the header work around them.
 */
const keyFor = createKeyCache();

parentPort!.on('message', (req: SignRequest) => {
  // A key that does not parse fails its request only (inside the promise), not the thread.
  Promise.resolve()
    .then(() => signForward(Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength),
      { domain: req.domain, selector: req.selector, privateKey: keyFor(req.domain, req.pem) },
      { authservId: req.authservId, authResults: req.authResults, now: new Date(req.now) }))
    .then((signed) => {
      // Only the prepended header fields travel back: the message below them is the caller's own bytes.
      const head = signed.subarray(0, signed.length - req.raw.byteLength);
      const reply: SignReply = { id: req.id, ok: true, head: new Uint8Array(head) };
      parentPort!.postMessage(reply, [reply.head!.buffer as ArrayBuffer]);
    }, (err: unknown) => {
      const reply: SignReply = { id: req.id, ok: false, error: (err as Error)?.message ?? String(err) };
      parentPort!.postMessage(reply);
    });
});
