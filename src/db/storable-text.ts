/**
 * Text from outside (a remote server's reply, a receiver's answer, an error message quoting input)
 * as both databases store it: PostgreSQL refuses NUL in `text` ("invalid byte sequence for encoding
 * UTF8: 0x00"), so a NUL is written as U+FFFD, what a mail client would show. Lone surrogates need
 * nothing here: the driver encodes them as U+FFFD already. `max` bounds the length kept.
 */
export function storableText(text: string, max = Infinity): string {
  const cut = text.length > max ? text.slice(0, max) : text;
  return cut.includes('\u0000') ? cut.replace(/\u0000/g, '\ufffd') : cut;
}
