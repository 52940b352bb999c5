// Anti-replay window after RFC 6479: a ring of 32-bit words; advancing clears whole
// words, so the cost does not depend on the window size. 64 words = 2048 bits, of
// which 2016 are usable (one word is always being recycled).
const WORD_BITS = 32;
const WORDS = 64;
const WORD_MASK = WORDS - 1;

export const REPLAY_WINDOW_SIZE = (WORDS - 1) * WORD_BITS;

export class ReplayWindow {
  private readonly bitmap = new Uint32Array(WORDS);
  /** highest sequence number accepted so far, -1 before the first */
  private top = -1;

  /** Would `seq` be accepted? (No state change: call before the AEAD check.) */
  check(seq: number): boolean {
    if (seq > this.top) return true;
    if (seq + REPLAY_WINDOW_SIZE <= this.top) return false;
    const word = Math.floor(seq / WORD_BITS) & WORD_MASK;
    return ((this.bitmap[word] as number) & (1 << (seq % WORD_BITS))) === 0;
  }

  /** Mark `seq` as seen (call after the AEAD check). False if it was too old or already seen. */
  update(seq: number): boolean {
    if (seq > this.top) {
      const curWord = this.top < 0 ? -1 : Math.floor(this.top / WORD_BITS);
      const newWord = Math.floor(seq / WORD_BITS);
      let diff = newWord - curWord;
      if (diff > WORDS) diff = WORDS;
      for (let i = 1; i <= diff; i++) this.bitmap[(curWord + i) & WORD_MASK] = 0;
      this.top = seq;
    } else if (seq + REPLAY_WINDOW_SIZE <= this.top) {
      return false;
    }
    const word = Math.floor(seq / WORD_BITS) & WORD_MASK;
    const bit = 1 << (seq % WORD_BITS);
    const w = this.bitmap[word] as number;
    if ((w & bit) !== 0) return false;
    this.bitmap[word] = w | bit;
    return true;
  }

  get highest(): number {
    return this.top;
  }
}
