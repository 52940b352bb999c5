// The world's process table: named components, each a command run in a network
// namespace with its own environment, restarted with backoff when it dies (the one
// process supervisor, src/platform/process), logging JSON lines to <state>/logs/<name>.log. Later work (gateway daemon, node agent,
// control module, code-hosting server) adds its entries with ProcessTable.add().
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { netnsPath } from '../../platform/netns/index.js';
import type { ComponentStatus } from '../../platform/cli-kit/index.js';
import { SupervisedProcess } from '../../platform/process/index.js';

export interface Component {
  /** unique; also the log file name */
  name: string;
  /** ip netns name to run in; undefined = the world root namespace */
  netns?: string;
  /** argv; the first element is the program */
  command: string[];
  env?: Record<string, string>;
  /**
   * 'ipc': ready when the process sends {type:'ready'} over its IPC channel (Node programs);
   * 'started': once spawned; { http, match }: once GET http answers 200 (and its body
   * contains match), polled from the world root
   */
  ready?: 'ipc' | 'started' | { http: string; match?: string };
  /** where its Prometheus /metrics is reachable from the world root (host:port), for status */
  metrics?: string;
  /** for runWorld's extra components: start once the network is built, or (default) once the store API is up */
  startAfter?: 'network' | 'store';
  /** with ready 'ipc': a message sent to the process each time it starts (its initial work, again after a restart) */
  hello?: () => unknown;
  /** with ready 'ipc': every other message the process sends */
  onMessage?: (msg: unknown) => void;
}

export type { ComponentStatus } from '../../platform/cli-kit/index.js';

interface Entry {
  spec: Component;
  proc: SupervisedProcess;
  /** ready once (a restart does not take it back) */
  ready: boolean;
  waiters: (() => void)[];
}

export class ProcessTable {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly logDir: string,
    private readonly log: Logger,
    private readonly onChange: () => void = () => undefined,
  ) {
    mkdirSync(logDir, { recursive: true });
  }

  /** Add a component and start it. */
  add(spec: Component): void {
    if (this.entries.has(spec.name)) throw new Error(`component ${spec.name} already exists`);
    const proc = new SupervisedProcess({
      command: spec.netns ? ['nsenter', `--net=${netnsPath(spec.netns)}`, '--', ...spec.command] : spec.command,
      env: { ...process.env, STRAIT_PROC: spec.name, STRAIT_LOG_FD: '2', ...spec.env },
      logFile: this.logPath(spec.name),
      ready: spec.ready ?? 'started',
      // a session of its own: Ctrl-C on the terminal reaches the supervisor, which stops components in order
      detached: true,
      onStart: (child) => {
        this.log.info({ name: spec.name, pid: child.pid, netns: spec.netns }, 'component started');
        if (spec.ready === 'ipc' && spec.hello) proc.send(spec.hello());
      },
      onReady: () => this.markReady(entry),
      ...(spec.onMessage ? { onMessage: spec.onMessage } : {}),
      onError: (err) => this.log.error({ err, name: spec.name }, 'component failed to start'),
      onExit: ({ code, signal, upMs, restartInMs }) => {
        if (restartInMs === undefined) return;
        this.log.warn({ name: spec.name, code, signal, upMs, restartInMs }, 'component exited; restarting');
        this.onChange();
      },
    });
    const entry: Entry = { spec, proc, ready: false, waiters: [] };
    this.entries.set(spec.name, entry);
    proc.start();
  }

  /** Resolve when every component has been ready once (or the timeout passes: reject). */
  async waitReady(timeoutMs: number): Promise<void> {
    const pending = [...this.entries.values()].filter((e) => !e.ready);
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.all(pending.map((e) => new Promise<void>((resolve) => e.waiters.push(resolve)))),
        new Promise<void>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `components not ready after ${timeoutMs} ms: ${pending
                    .filter((e) => !e.ready)
                    .map((e) => e.spec.name)
                    .join(', ')}`,
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  status(): ComponentStatus[] {
    return [...this.entries.values()].map((e) => ({
      name: e.spec.name,
      ...(e.spec.netns ? { netns: e.spec.netns } : {}),
      ...(e.proc.pid ? { pid: e.proc.pid } : {}),
      restarts: e.proc.restarts,
      ready: e.ready,
      ...(e.spec.metrics ? { metrics: e.spec.metrics } : {}),
      log: this.logPath(e.spec.name),
    }));
  }

  pids(): number[] {
    return [...this.entries.values()].map((e) => e.proc.pid).filter((p): p is number => typeof p === 'number');
  }

  /** Send a message over a component's IPC channel; false when it is not running. */
  send(name: string, msg: unknown): boolean {
    return this.entries.get(name)?.proc.send(msg) ?? false;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  logPath(name: string): string {
    return join(this.logDir, `${name}.log`);
  }

  /** Stop one component (SIGTERM, then SIGKILL after graceMs) and forget it. */
  async remove(name: string, graceMs = 3000): Promise<void> {
    const e = this.entries.get(name);
    if (!e) return;
    this.entries.delete(name);
    for (const w of e.waiters.splice(0)) w();
    await e.proc.stop(graceMs);
  }

  /** Stop everything (SIGTERM, then SIGKILL after graceMs). */
  async stop(graceMs = 3000): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.proc.stop(graceMs)));
  }

  private markReady(entry: Entry): void {
    entry.ready = true;
    for (const w of entry.waiters.splice(0)) w();
    this.onChange();
  }
}
