/**
 * A model's token counts as the classifier read them, in typed arrays: an open-addressing hash table
 * keyed by the 53-bit feature ids (tokens.ts), so looking up a message's ~170 features neither makes
 * nor hashes a number object per feature (with a Map of such keys, classifying a 5 KB message from
 * kept counts took 20 µs, with this 9). A token can be known with its counts, known to be absent
 * from the model, or not read yet.
 */
export class TokenTable {
  private keys: Float64Array;
  private spamCounts: Int32Array;
  private hamCounts: Int32Array;
  private mask: number;
  /** Tokens held (known and absent ones). */
  size = 0;

  constructor(capacity = 1024) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.keys = new Float64Array(slots).fill(-1);
    this.spamCounts = new Int32Array(slots);
    this.hamCounts = new Int32Array(slots);
    this.mask = slots - 1;
  }

  /** The slot of `token`, or -1 when it was not read yet. */
  find(token: number): number {
    // The ids are hashes already: their low 32 bits are as good a start as any.
    let i = (token >>> 0) & this.mask;
    for (;;) {
      const k = this.keys[i];
      if (k === token) return i;
      if (k === -1) return -1;
      i = (i + 1) & this.mask;
    }
  }

  /** Whether the token at `slot` is in the model (else it was read and found absent). */
  known(slot: number): boolean { return this.spamCounts[slot] >= 0; }
  spam(slot: number): number { return this.spamCounts[slot]; }
  ham(slot: number): number { return this.hamCounts[slot]; }

  /** Records what was read of `token`: its counts, or null when the model does not have it. */
  set(token: number, counts: { spam: number; ham: number } | null): void {
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    let i = (token >>> 0) & this.mask;
    while (this.keys[i] !== -1 && this.keys[i] !== token) i = (i + 1) & this.mask;
    if (this.keys[i] === -1) this.size++;
    this.keys[i] = token;
    this.spamCounts[i] = counts ? counts.spam : -1;
    this.hamCounts[i] = counts ? counts.ham : 0;
  }

  private grow(): void {
    const { keys, spamCounts, hamCounts } = this;
    const slots = keys.length * 2;
    this.keys = new Float64Array(slots).fill(-1);
    this.spamCounts = new Int32Array(slots);
    this.hamCounts = new Int32Array(slots);
    this.mask = slots - 1;
    for (let j = 0; j < keys.length; j++) {
      if (keys[j] === -1) continue;
      let i = (keys[j] >>> 0) & this.mask;
      while (this.keys[i] !== -1) i = (i + 1) & this.mask;
      this.keys[i] = keys[j];
      this.spamCounts[i] = spamCounts[j];
      this.hamCounts[i] = hamCounts[j];
    }
  }
}
