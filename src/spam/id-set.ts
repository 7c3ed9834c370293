/**
 * The distinct feature ids of one message in the order first added: an open-addressing table of
 * doubles, because a Set of 53-bit numbers boxes and hashes each of the ~400 ids a message yields
 * (a fifth of tokenising a message).
 */
export class IdSet {
  private keys = new Float64Array(512).fill(-1);
  private mask = 511;
  /** The ids, distinct, in the order first added. */
  readonly ids: number[] = [];

  /** Adds a feature id (a non-negative integer). */
  add(id: number): void {
    if ((this.ids.length + 1) * 2 > this.keys.length) this.grow();
    let i = (id >>> 0) & this.mask;
    for (;;) {
      const k = this.keys[i];
      if (k === id) return;
      if (k === -1) break;
      i = (i + 1) & this.mask;
    }
    this.keys[i] = id;
    this.ids.push(id);
  }

  private grow(): void {
    this.keys = new Float64Array(this.keys.length * 2).fill(-1);
    this.mask = this.keys.length - 1;
    for (const id of this.ids) {
      let i = (id >>> 0) & this.mask;
      while (this.keys[i] !== -1) i = (i + 1) & this.mask;
      this.keys[i] = id;
    }
  }
}
