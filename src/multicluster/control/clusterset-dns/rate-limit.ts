// Per-source token bucket: each source address gets `qps` tokens a second, up to `burst`.
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly maxSources = 65_536,
  ) {}

  allow(source: string, nowMs: number): boolean {
    let b = this.buckets.get(source);
    if (!b) {
      if (this.buckets.size >= this.maxSources) this.buckets.clear();
      b = { tokens: this.burst, at: nowMs };
      this.buckets.set(source, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((nowMs - b.at) * this.qps) / 1000);
      b.at = nowMs;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
