// mailauth ships types for its main entry only. sign.ts imports the signing, sealing and ARC
// verification functions from their own modules so the delivery side does not load BIMI, SPF and
// the rest; they are the same functions the main entry re-exports.
declare module 'mailauth/lib/dkim/sign.js' { export { dkimSign } from 'mailauth'; }
declare module 'mailauth/lib/arc/index.js' { export { sealMessage, arc } from 'mailauth'; }
