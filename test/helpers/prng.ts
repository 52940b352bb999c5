// The fuzz tests' seeded generator (xorshift32): the same seed gives the same inputs, so a
// failure names a seed that reproduces it.
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}
