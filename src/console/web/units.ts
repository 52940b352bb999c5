// The console's copy of src/base/units (the browser bundle imports nothing outside
// src/console/web): RTTs from Go duration text in one unit with 3 significant digits.
// test/unit/units.test.ts holds both to the same table.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

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

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  if (ms === 0) return '0 ms';
  return `${Math.abs(ms) >= 100 ? String(Math.round(ms)) : ms.toPrecision(3)} ms`;
}

export function formatRtt(goDuration: string): string {
  if (!goDuration) return '';
  const ms = parseGoDuration(goDuration);
  return ms === undefined ? goDuration : formatMs(ms);
}
