// Structured JSON logs with levels (pino). One root logger per process; components
// take a child with their name. Level from STRAIT_LOG_LEVEL (default info).
import { pino, type Logger } from 'pino';

export type { Logger };

let root: Logger | undefined;

export function rootLogger(): Logger {
  root ??= pino(
    {
      level: process.env['STRAIT_LOG_LEVEL'] ?? 'info',
      base: { pid: process.pid, proc: process.env['STRAIT_PROC'] ?? undefined },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: Number(process.env['STRAIT_LOG_FD'] ?? 2), sync: false }),
  );
  return root;
}

export function createLogger(component: string, bindings: Record<string, unknown> = {}): Logger {
  return rootLogger().child({ component, ...bindings });
}

/** A logger that drops everything (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
