import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import test from 'ava';
import { Spool } from '../../src/smtp/spool.js';
import { collectYoungGarbage } from '../../src/threads/young-gc.js';

test('a message spilled to the file keeps the bytes whole, and its spent buffers do not pile up in memory meanwhile', async (t) => {
  t.true(collectYoungGarbage(), 'V8 can be asked for a scavenge');
  const dir = mkdtempSync(join(tmpdir(), 'mailstead-spool-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const spool = new Spool({ dir, head: Buffer.from('Received: x\r\n'), memoryLimit: 64 * 1024, maxBytes: 30 * 1024 * 1024 });
  const hash = createHash('sha256').update('Received: x\r\n');
  let peak = 0;
  // 20 MB in fresh 64 KB buffers, as socket reads arrive: without scavenges along the way all of
  // them would still be counted at the end (young array buffers go only at a scavenge).
  await pipeline(Readable.from((function* () {
    for (let i = 0; i < 320; i++) {
      const chunk = Buffer.allocUnsafeSlow(64 * 1024).fill(i);
      hash.update(chunk);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      yield chunk;
    }
  })()), spool);
  const result = spool.result();
  t.true('path' in result);
  const bytes = readFileSync((result as { path: string }).path);
  t.is(bytes.length, 13 + 20 * 1024 * 1024);
  t.is(createHash('sha256').update(bytes).digest('hex'), hash.digest('hex'));
  t.true(peak < 12 * 1024 * 1024, `array buffers peaked at ${(peak / 1048576).toFixed(1)} MB`);
});

