// The world's process table: named components, each a command run in a network
// namespace with its own environment, restarted with backoff when it dies, logging
// JSON lines to <state>/logs/<name>.log. Later work (gateway daemon, node agent,
// control module, code-hosting server) adds its entries with ProcessTable.add().
import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { netnsPath } from '../../platform/netns/index.js';

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

export interface ComponentStatus {
  name: string;
  netns?: string;
  pid?: number;
  restarts: number;
  ready: boolean;
  metrics?: string;
  log: string;
}

interface Entry {
  spec: Component;
  child?: ChildProcess;
  restarts: number;
  ready: boolean;
  backoffMs: number;
  startedAt: number;
  timer?: NodeJS.Timeout;
  waiters: (() => void)[];
  removed?: boolean;
}

const MIN_BACKOFF = 200;
const MAX_BACKOFF = 10_000;

export class ProcessTable {
  private entries = new Map<string, Entry>();
  private stopping = false;

  constructor(private readonly logDir: string, private readonly log: Logger, private readonly onChange: () => void = () => undefined) {
    mkdirSync(logDir, { recursive: true });
  }

  /** Add a component and start it. */
  add(spec: Component): void {
    if (this.entries.has(spec.name)) throw new Error(`component ${spec.name} already exists`);
    const entry: Entry = { spec, restarts: 0, ready: false, backoffMs: MIN_BACKOFF, startedAt: 0, waiters: [] };
    this.entries.set(spec.name, entry);
    this.start(entry);
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
          timer = setTimeout(() => reject(new Error(`components not ready after ${timeoutMs} ms: ${pending.filter((e) => !e.ready).map((e) => e.spec.name).join(', ')}`)), timeoutMs);
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
      ...(e.child?.pid ? { pid: e.child.pid } : {}),
      restarts: e.restarts,
      ready: e.ready,
      ...(e.spec.metrics ? { metrics: e.spec.metrics } : {}),
      log: this.logPath(e.spec.name),
    }));
  }

  pids(): number[] {
    return [...this.entries.values()].map((e) => e.child?.pid).filter((p): p is number => typeof p === 'number');
  }

  /** Send a message over a component's IPC channel; false when it is not running. */
  send(name: string, msg: unknown): boolean {
    const child = this.entries.get(name)?.child;
    if (!child?.connected) return false;
    child.send(msg as object);
    return true;
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
    clearTimeout(e.timer);
    e.removed = true;
    for (const w of e.waiters.splice(0)) w();
    const child = e.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => { clearTimeout(kill); resolve(); });
      child.kill('SIGTERM');
    });
  }

  /** Stop everything (SIGTERM, then SIGKILL after graceMs). */
  async stop(graceMs = 3000): Promise<void> {
    this.stopping = true;
    const waits: Promise<void>[] = [];
    for (const e of this.entries.values()) {
      clearTimeout(e.timer);
      const child = e.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      waits.push(new Promise<void>((resolve) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
        child.once('exit', () => { clearTimeout(kill); resolve(); });
        child.kill('SIGTERM');
      }));
    }
    await Promise.all(waits);
  }

  private start(entry: Entry): void {
    const { spec } = entry;
    const argv = spec.netns ? ['nsenter', `--net=${netnsPath(spec.netns)}`, '--', ...spec.command] : spec.command;
    const fd = openSync(this.logPath(spec.name), 'a');
    let child: ChildProcess;
    try {
      child = spawn(argv[0] as string, argv.slice(1), {
        stdio: ['ignore', fd, fd, ...(spec.ready === 'ipc' ? ['ipc' as const] : [])],
        // a session of its own: Ctrl-C on the terminal reaches the supervisor, which stops components in order
        detached: true,
        env: { ...process.env, STRAIT_PROC: spec.name, STRAIT_LOG_FD: '2', ...spec.env },
      });
    } finally {
      closeSync(fd);
    }
    entry.child = child;
    entry.startedAt = Date.now();
    child.on('error', (err) => this.log.error({ err, name: spec.name }, 'component failed to start'));
    if (spec.ready === 'ipc') {
      child.on('message', (m: unknown) => {
        if (m && typeof m === 'object' && (m as { type?: string }).type === 'ready') this.markReady(entry);
        else spec.onMessage?.(m);
      });
      if (spec.hello) child.once('spawn', () => { if (child.connected) child.send(spec.hello?.() as object); });
    } else if (spec.ready && typeof spec.ready === 'object') {
      const probe = spec.ready;
      const poll = (): void => {
        if (entry.child !== child || entry.ready || this.stopping) return;
        const req = get(probe.http, { timeout: 1000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => { if (body.length < 1 << 20) body += d; });
          res.on('end', () => {
            if (res.statusCode === 200 && (!probe.match || body.includes(probe.match))) this.markReady(entry);
            else setTimeout(poll, 100);
          });
        });
        req.on('error', () => setTimeout(poll, 100));
        req.on('timeout', () => req.destroy());
      };
      child.once('spawn', () => setTimeout(poll, 50));
    } else {
      child.once('spawn', () => this.markReady(entry));
    }
    child.once('exit', (code, signal) => {
      entry.child = undefined;
      if (this.stopping || entry.removed) return;
      const upMs = Date.now() - entry.startedAt;
      if (upMs > MAX_BACKOFF) entry.backoffMs = MIN_BACKOFF;
      this.log.warn({ name: spec.name, code, signal, upMs, restartInMs: entry.backoffMs }, 'component exited; restarting');
      entry.restarts++;
      entry.timer = setTimeout(() => this.start(entry), entry.backoffMs);
      entry.backoffMs = Math.min(entry.backoffMs * 2, MAX_BACKOFF);
      this.onChange();
    });
    this.log.info({ name: spec.name, pid: child.pid, netns: spec.netns }, 'component started');
  }

  private markReady(entry: Entry): void {
    entry.ready = true;
    for (const w of entry.waiters.splice(0)) w();
    this.onChange();
  }
}
