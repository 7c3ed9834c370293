// mailauth ships types for its main entry only. auth.ts imports the three verifiers from their own
// modules instead, which leaves ARC, BIMI, signing and their dependencies unloaded (~4.7 MB less
// heap in every parser thread); they are the same functions the main entry re-exports.
declare module 'mailauth/lib/dkim/verify.js' { export { dkimVerify } from 'mailauth'; }
declare module 'mailauth/lib/spf/index.js' { export { spf } from 'mailauth'; }
declare module 'mailauth/lib/dmarc/index.js' { export { dmarc } from 'mailauth'; }
