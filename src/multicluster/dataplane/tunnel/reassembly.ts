// Bounded reassembly of fragmented messages (tunnel fragments, type 5, and the agent's
// VXLAN super-packet fragments). A fixed number of slots, each with one buffer of
// `headroom + maxBody` bytes allocated on first use and reused: memory never exceeds
// slots x (headroom + maxBody), whatever arrives. A message is identified by two
// numbers (tunnel: SPI and sequence; VXLAN: agent address and message id). When every
// slot is busy the one started longest ago is given up (evicted): new traffic wins over
// a message that lost a fragment. Nothing here is trusted: the tunnel authenticates the
// reassembled body with its AEAD tag, so a forged fragment can at worst spoil one message.
import { MAX_FRAGMENTS } from '../../wire/tunnel/index.js';

/** add() results below zero */
export const FRAG_PENDING = -1;
export const FRAG_DUPLICATE = -2;
export const FRAG_INCONSISTENT = -3;

export class ReassemblyCounters {
  /** messages completed */
  reassembled = 0;
  /** incomplete messages given up to make room */
  evicted = 0;
  /** incomplete messages given up after the timeout */
  expired = 0;
  /** fragments already received */
  duplicates = 0;
  /** fragments whose count or size disagree with the first fragment of their message */
  inconsistent = 0;
}

export class Reassembler {
  readonly counters = new ReassemblyCounters();
  private readonly keyA: Float64Array;
  private readonly keyB: Float64Array;
  private readonly startedAt: Float64Array;
  private readonly count: Uint8Array;
  private readonly got: Uint8Array;
  private readonly size: Uint16Array;
  private readonly total: Int32Array;
  private readonly inUse: Uint8Array;
  /** one flag per (slot, fragment index) */
  private readonly seen: Uint8Array;
  private readonly buffers: (Buffer | undefined)[];

  /**
   * `slots` messages at once, each up to `maxBody` bytes stored at `headroom` in its
   * buffer (room for a header the caller writes in front, e.g. the AEAD's associated data).
   */
  constructor(
    readonly slots: number,
    readonly maxBody: number,
    readonly headroom: number,
    readonly timeoutMs: number,
  ) {
    this.keyA = new Float64Array(slots);
    this.keyB = new Float64Array(slots);
    this.startedAt = new Float64Array(slots);
    this.count = new Uint8Array(slots);
    this.got = new Uint8Array(slots);
    this.size = new Uint16Array(slots);
    this.total = new Int32Array(slots);
    this.inUse = new Uint8Array(slots);
    this.seen = new Uint8Array(slots * MAX_FRAGMENTS);
    this.buffers = new Array<Buffer | undefined>(slots).fill(undefined);
  }

  /** Bytes held by slot buffers so far (the bound is slots x (headroom + maxBody)). */
  get allocatedBytes(): number {
    let n = 0;
    for (let i = 0; i < this.slots; i++) if (this.buffers[i] !== undefined) n += this.headroom + this.maxBody;
    return n;
  }

  /** Messages in progress. */
  get pending(): number {
    let n = 0;
    for (let i = 0; i < this.slots; i++) n += this.inUse[i] as number;
    return n;
  }

  /**
   * Add fragment `index` of `count` (every fragment but the last has `size` bytes; the
   * caller has checked that) from `src[off .. off+len)`. Returns the slot when the
   * message is complete (read it with buffer()/length(), then release()), or FRAG_*.
   */
  add(a: number, b: number, index: number, count: number, size: number, src: Buffer, off: number, len: number, now: number): number {
    let slot = -1;
    const slots = this.slots;
    for (let i = 0; i < slots; i++) {
      if (this.inUse[i] === 1 && this.keyB[i] === b && this.keyA[i] === a) {
        slot = i;
        break;
      }
    }
    if (slot < 0) {
      slot = this.claim(now);
      this.keyA[slot] = a;
      this.keyB[slot] = b;
      this.startedAt[slot] = now;
      this.count[slot] = count;
      this.size[slot] = size;
      this.got[slot] = 0;
      this.total[slot] = -1;
      this.inUse[slot] = 1;
      this.seen.fill(0, slot * MAX_FRAGMENTS, slot * MAX_FRAGMENTS + MAX_FRAGMENTS);
    } else if (this.count[slot] !== count || this.size[slot] !== size) {
      this.counters.inconsistent++;
      return FRAG_INCONSISTENT;
    }
    const flag = slot * MAX_FRAGMENTS + index;
    if (this.seen[flag] === 1) {
      this.counters.duplicates++;
      return FRAG_DUPLICATE;
    }
    const at = index * size;
    if (at + len > this.maxBody) {
      this.counters.inconsistent++;
      return FRAG_INCONSISTENT;
    }
    let buf = this.buffers[slot];
    if (buf === undefined) {
      buf = Buffer.allocUnsafe(this.headroom + this.maxBody);
      this.buffers[slot] = buf;
    }
    src.copy(buf, this.headroom + at, off, off + len);
    this.seen[flag] = 1;
    if (index === count - 1) this.total[slot] = at + len;
    const got = (this.got[slot] as number) + 1;
    this.got[slot] = got;
    if (got < count) return FRAG_PENDING;
    this.counters.reassembled++;
    return slot;
  }

  /** The slot's buffer: the message is at [headroom, headroom + length(slot)). */
  buffer(slot: number): Buffer {
    return this.buffers[slot] as Buffer;
  }

  length(slot: number): number {
    return this.total[slot] as number;
  }

  release(slot: number): void {
    this.inUse[slot] = 0;
  }

  /** Give up messages older than the timeout (call from a timer). Returns how many. */
  expire(now: number): number {
    let n = 0;
    for (let i = 0; i < this.slots; i++) {
      if (this.inUse[i] === 1 && now - (this.startedAt[i] as number) >= this.timeoutMs) {
        this.inUse[i] = 0;
        n++;
      }
    }
    this.counters.expired += n;
    return n;
  }

  /** Forget everything in progress (session dropped). */
  clear(): void {
    this.inUse.fill(0);
  }

  private claim(now: number): number {
    let oldest = 0;
    for (let i = 0; i < this.slots; i++) {
      if (this.inUse[i] === 0) return i;
      if ((this.startedAt[i] as number) < (this.startedAt[oldest] as number)) oldest = i;
    }
    if (now - (this.startedAt[oldest] as number) >= this.timeoutMs) this.counters.expired++;
    else this.counters.evicted++;
    return oldest;
  }
}
