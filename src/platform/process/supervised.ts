// One supervised child process: spawned with its output appended to a log file, an IPC
// channel when asked, ready when it says so ({type:'ready'} over IPC), when spawned or when
// an HTTP probe answers, and restarted with the one retry policy (src/base/backoff) when it
// dies; a run that lasted `stableAfterMs` starts the backoff over. stop() signals only the
// PID this supervisor spawned (SIGTERM, then SIGKILL after the grace period), never a group
// or a name. Used by the world's process table, the mesh agent's sidecar supervisor and its
// node-proxy supervisor.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { get } from 'node:http';
import { dirname } from 'node:path';
import { Backoff, type BackoffPolicy } from '../../base/backoff/index.js';

/** 200 ms after the first crash, doubling, at most 10 s. */
export const PROCESS_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 200, maxMs: 10_000 });

export type Readiness = 'ipc' | 'started' | { http: string; match?: string };

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** how long the run lasted */
  upMs: number;
  /** the delay before the restart; undefined when the process was stopped (no restart) */
  restartInMs?: number;
}

export interface SupervisedOptions {
  /** argv; the first element is the program */
  command: string[];
  /** the child's whole environment (default: this process's) */
  env?: NodeJS.ProcessEnv;
  /** the file that takes the child's stderr (and its stdout with stdout 'log'); opened for appending */
  logFile: string;
  /** where the child's stdout goes (default 'log') */
  stdout?: 'log' | 'ignore';
  /** 'ipc': ready on {type:'ready'} over the IPC channel; 'started' (default): once spawned;
   *  { http, match }: once GET http answers 200 (and its body contains match) */
  ready?: Readiness;
  /** open an IPC channel even when readiness is not 'ipc' (implied by ready 'ipc') */
  ipc?: boolean;
  /** a session of its own (signals to the supervisor's terminal do not reach it) */
  detached?: boolean;
  /** default PROCESS_BACKOFF */
  backoff?: BackoffPolicy;
  /** a run that lasted this long starts the backoff over (default the policy's maxMs) */
  stableAfterMs?: number;
  /** before each start: throw to count a failed start, retried with the backoff */
  prepare?: () => void;
  /** `prepare` threw; the retry comes after `retryInMs` */
  onPrepareError?: (err: unknown, retryInMs: number) => void;
  /** spawned (pid known); with IPC the channel is open: the place for a first message */
  onStart?: (child: ChildProcess) => void;
  /** ready (once per run) */
  onReady?: () => void;
  /** every IPC message other than {type:'ready'} (with ready 'ipc') */
  onMessage?: (msg: unknown) => void;
  /** the process could not be spawned or signalled (ENOENT, EPERM, ...) */
  onError?: (err: Error) => void;
  /** the run ended; restartInMs says when the next one starts */
  onExit?: (info: ExitInfo) => void;
}

export class SupervisedProcess {
  private child: ChildProcess | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private stopped = false;
  private started = false;
  private isReady = false;
  private restartCount = 0;

  constructor(private readonly o: SupervisedOptions) {
    this.backoff = new Backoff(o.backoff ?? PROCESS_BACKOFF);
  }

  /** Start the first run (once). */
  start(): this {
    if (!this.started) {
      this.started = true;
      this.launch();
    }
    return this;
  }

  /** the PID of the current run, if one runs */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** the current run is ready */
  get ready(): boolean {
    return this.isReady;
  }

  /** runs that ended and failed starts (each followed by a restart), since start() */
  get restarts(): number {
    return this.restartCount;
  }

  /** The IPC channel of the current run is open. */
  get connected(): boolean {
    return !!this.child?.connected;
  }

  /** Send a message over the IPC channel; false when no run has one open. */
  send(msg: unknown): boolean {
    const child = this.child;
    if (!child?.connected) return false;
    child.send(msg as object);
    return true;
  }

  /**
   * No more restarts; SIGTERM to the PID of the current run, SIGKILL after graceMs.
   * Resolves when that process has exited (at once when none runs).
   */
  stop(graceMs = 3000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  private launch(): void {
    if (this.stopped) return;
    const o = this.o;
    try {
      o.prepare?.();
    } catch (err) {
      const retryInMs = this.scheduleRestart();
      o.onPrepareError?.(err, retryInMs);
      return;
    }
    mkdirSync(dirname(o.logFile), { recursive: true });
    const ipc = o.ready === 'ipc' || !!o.ipc;
    const fd = openSync(o.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(o.command[0] as string, o.command.slice(1), {
        stdio: ['ignore', o.stdout === 'ignore' ? 'ignore' : fd, fd, ...(ipc ? ['ipc' as const] : [])],
        detached: !!o.detached,
        env: o.env ?? process.env,
      });
    } finally {
      closeSync(fd);
    }
    this.child = child;
    this.isReady = false;
    const startedAt = Date.now();
    child.on('error', (err) => o.onError?.(err));
    if (ipc) {
      child.on('message', (m: unknown) => {
        if (o.ready === 'ipc' && m && typeof m === 'object' && (m as { type?: unknown }).type === 'ready') this.markReady(child);
        else o.onMessage?.(m);
      });
    }
    child.once('spawn', () => {
      if (this.child !== child) return;
      o.onStart?.(child);
      if (o.ready === undefined || o.ready === 'started') this.markReady(child);
      else if (typeof o.ready === 'object') this.probe(child, o.ready);
    });
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      this.isReady = false;
      const upMs = Date.now() - startedAt;
      if (this.stopped) {
        o.onExit?.({ code, signal, upMs });
        return;
      }
      if (upMs > (o.stableAfterMs ?? this.backoff.policy.maxMs)) this.backoff.reset();
      const restartInMs = this.scheduleRestart();
      o.onExit?.({ code, signal, upMs, restartInMs });
    });
  }

  private scheduleRestart(): number {
    const ms = this.backoff.fail();
    this.restartCount++;
    this.timer = setTimeout(() => this.launch(), ms);
    this.timer.unref();
    return ms;
  }

  private markReady(child: ChildProcess): void {
    if (this.child !== child || this.isReady) return;
    this.isReady = true;
    this.o.onReady?.();
  }

  /** GET the probe URL every 100 ms until it answers 200 (with `match` in its body). */
  private probe(child: ChildProcess, p: { http: string; match?: string }): void {
    const poll = (): void => {
      if (this.child !== child || this.isReady || this.stopped) return;
      const again = (): void => {
        setTimeout(poll, 100).unref();
      };
      const req = get(p.http, { timeout: 1000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          if (body.length < 1 << 20) body += d;
        });
        res.on('end', () => {
          if (res.statusCode === 200 && (!p.match || body.includes(p.match))) this.markReady(child);
          else again();
        });
      });
      req.on('error', again);
      req.on('timeout', () => req.destroy());
    };
    setTimeout(poll, 50).unref();
  }
}
