/**
 * The mixed mail of the IMAP benchmark, deterministic (the same N messages every run, for both
 * servers): 60 % plain text of 1-8 KB, 25 % multipart/alternative (text and HTML), 15 %
 * multipart/mixed with a 10-50 KB base64 attachment; some subjects are RFC 2047 encoded words,
 * some messages have a Cc. One message in 1,000 contains RARE_WORD in its body.
 */

/** The word SEARCH TEXT looks for (in 1 message of 1,000). */
export const RARE_WORD = 'zephyrine';

let state = 0x2545f491;
function rand(): number {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 0x100000000;
}
const WORDS = ['mail', 'server', 'queue', 'report', 'meeting', 'invoice', 'project', 'update', 'status', 'review', 'garden', 'travel', 'budget', 'draft', 'notes', 'release', 'harbour', 'lantern', 'meadow', 'quartz'];
const word = () => WORDS[Math.floor(rand() * WORDS.length)];

function paragraph(chars: number, rare: boolean): string {
  const lines: string[] = [];
  let line = rare ? `${RARE_WORD} ` : '';
  let n = 0;
  while (n < chars) {
    const w = word();
    line += `${w} `;
    n += w.length + 1;
    if (line.length > 70) { lines.push(line.trimEnd()); line = ''; }
  }
  if (line) lines.push(line.trimEnd());
  return lines.join('\r\n');
}

/** Message `i` of the set, addressed to `to`, as CRLF text. */
export function mixedMessage(i: number, to: string): Buffer {
  const rare = i % 1000 === 500;
  const kind = rand();
  const subject = i % 7 === 0 ? `=?UTF-8?B?${Buffer.from(`Grüße ${word()} ${i}`).toString('base64')}?=` : `${word()} ${word()} ${i}`;
  const date = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toUTCString().replace('GMT', '+0000');
  const head = [
    `From: "Sender ${i % 50}" <sender${i % 50}@client.example>`, `To: ${to}`,
    ...(i % 5 === 0 ? [`Cc: other${i % 9}@client.example, "Third Person" <third@client.example>`] : []),
    `Subject: ${subject}`, `Date: ${date}`, `Message-ID: <bench-${i}@client.example>`, 'MIME-Version: 1.0',
  ];
  const text = paragraph(1000 + Math.floor(rand() * 7000), rare);
  let body: string;
  if (kind < 0.6) {
    head.push('Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 7bit');
    body = text;
  } else if (kind < 0.85) {
    const b = `alt-${i}`;
    head.push(`Content-Type: multipart/alternative; boundary="${b}"`);
    body = [`--${b}`, 'Content-Type: text/plain; charset=utf-8', '', text, `--${b}`, 'Content-Type: text/html; charset=utf-8', '',
      `<html><body><p>${text.replace(/\r\n/g, '</p>\r\n<p>')}</p></body></html>`, `--${b}--`, ''].join('\r\n');
  } else {
    const b = `mix-${i}`;
    const bytes = Buffer.alloc(10_000 + Math.floor(rand() * 40_000));
    for (let k = 0; k < bytes.length; k++) bytes[k] = (k * 31 + i) & 0xff;
    head.push(`Content-Type: multipart/mixed; boundary="${b}"`);
    body = [`--${b}`, 'Content-Type: text/plain; charset=utf-8', '', text, `--${b}`,
      `Content-Type: application/octet-stream; name="file-${i}.bin"`, `Content-Disposition: attachment; filename="file-${i}.bin"`,
      'Content-Transfer-Encoding: base64', '', bytes.toString('base64').replace(/.{76}/g, '$&\r\n'), `--${b}--`, ''].join('\r\n');
  }
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}\r\n`, 'utf8');
}
