// Process lifecycle: ordered shutdown on SIGTERM/SIGINT, once.
import type { Logger } from 'pino';

type Closer = () => unknown;

export class Lifecycle {
  private closers: { name: string; fn: Closer }[] = [];
  private stopping: Promise<void> | undefined;

  /** Register something to close on shutdown; closed in reverse order of registration. */
  onShutdown(name: string, fn: Closer): void {
    this.closers.push({ name, fn });
  }

  /** Install SIGTERM/SIGINT handlers that run shutdown() and exit. */
  handleSignals(log?: Logger): void {
    const onSignal = (sig: NodeJS.Signals) => {
      log?.info({ signal: sig }, 'shutting down');
      void this.shutdown(log).then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  shutdown(log?: Logger): Promise<void> {
    this.stopping ??= (async () => {
      for (const c of [...this.closers].reverse()) {
        try {
          await c.fn();
        } catch (err) {
          log?.warn({ err, closer: c.name }, 'error during shutdown');
        }
      }
    })();
    return this.stopping;
  }
}
