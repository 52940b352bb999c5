// Numbers for people: durations read from Go's time.Duration text (what Submariner's
// records and subctl print: "3.265366ms", "945µs", "1m2.5s") and shown in one unit with 3
// significant digits, so a column of RTTs reads at a glance ("3.27 ms" next to "0.945 ms").
// The console's browser bundle has its own copy (src/console/web/units.ts), held to the same
// table by test/unit/units.test.ts.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration text ("3.265366ms", "1m2.5s", "0s"); undefined when it is none. */
export function parseGoDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let ms = 0;
  let m: RegExpExecArray | null;
  const sign = t.startsWith('-') ? -1 : 1;
  re.lastIndex = t.startsWith('-') || t.startsWith('+') ? 1 : 0;
  while ((m = re.exec(t)) !== null) {
    ms += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    if (re.lastIndex === t.length) return sign * ms;
  }
  return undefined;
}

/** Milliseconds in one unit with 3 significant digits: "3.27 ms", "0.945 ms", "12.5 ms", "1234 ms". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  if (ms === 0) return '0 ms';
  const a = Math.abs(ms);
  return `${a >= 100 ? String(Math.round(ms)) : ms.toPrecision(3)} ms`;
}

/** An RTT as strait's own tables show it, from Go duration text (unparsable text is shown as it is). */
export function formatRtt(goDuration: string): string {
  if (!goDuration) return '';
  const ms = parseGoDuration(goDuration);
  return ms === undefined ? goDuration : formatMs(ms);
}
