// Taking a node's data path over from the process this one replaces. A DaemonSet rolling
// update with maxSurge (deploy/node-agent.yaml, deploy/gateway.yaml) starts the new pod beside
// the old one; both are on the node's network, so the new daemon's UDP ports and TUN device
// are still held by the old one (EADDRINUSE, EBUSY) until the DaemonSet stops it once the new
// pod is ready. Told to wait, the new daemon tries again every 50 ms and takes each over the
// moment it is free (docs/upgrades.md); not told to (the local world, a test), it fails at
// once as before: something else holding the port is an error to report, not to wait for.
//
// A successor that waits says so on an abstract Unix socket of the node's network namespace
// (`@strait-<who>-successor`; hostNetwork pods share it): the process it replaces asks there
// when it stops: a gateway holding its cluster's Lease leaves the Lease to the successor on
// its node instead of releasing it to the cluster's other gateway (daemon-ha.ts): one handover
// per node in a roll, not two failovers; a node agent leaves its return path (nft table, rule,
// routes) in place for the successor, so no reply of a kernel-forwarded connection meets the
// node without it.
import { connect, createServer, type Server } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import { E } from '../../../base/errors/index.js';

/** what a handover waits for: a port in use, a TUN device attached elsewhere */
const HELD = /\bEADDRINUSE\b|errno 98\b|\bEBUSY\b|errno 16\b/;
const RETRY_MS = 50;
/** how long a stopping daemon waits for its successor's socket to answer (see successorWaiting) */
const SUCCESSOR_ASK_MS = 2000;

export interface HandoverOptions {
  /** how long to wait for the process this one replaces (0, the default: fail at once) */
  waitMs?: number;
  /** told once, when this process starts waiting */
  onWaiting?: (message: string) => void;
  /**
   * written (empty) when this process first reaches its data path, loaded and ready to take
   * it over: deploy/'s startupProbe, so the DaemonSet stops the old pod only then and the gap
   * is the takeover, not the new process's start. Removed when the Handover is made: a file
   * left by the container's previous run (the pod's /tmp outlives a restart) says nothing
   * about this one.
   */
  readyFile?: string;
  /**
   * say so on the node's successor socket while waiting (successorWaiting): only a daemon whose
   * predecessor asks there: the HA gateway (it leaves its Lease to a successor on the node) and
   * the node agent (it leaves its return path, which the successor programs again)
   */
  announceSuccessor?: boolean;
}

export class Handover {
  /** from the first open(): a gateway may wait for its PSK before it gets there */
  private deadline: number | undefined;
  private waitedSince: number | undefined;
  private tookAt: number | undefined;
  private readySaid = false;
  /** listening on the successor socket: from the first refusal until done() */
  private successorServer: Server | undefined;

  /** `who`: what this daemon is, for the message ("node agent", "gateway") */
  constructor(
    private readonly who: string,
    private readonly o: HandoverOptions = {},
  ) {
    if (o.readyFile) rmSync(o.readyFile, { force: true });
  }

  /**
   * A daemon process's handover, from its environment: $STRAIT_HANDOVER_WAIT_S (how long to
   * wait, below) and $STRAIT_HANDOVER_READY_FILE; its messages go to `log`.
   */
  static fromEnv(who: string, env: NodeJS.ProcessEnv, log: (message: string) => void, extra: Pick<HandoverOptions, 'announceSuccessor'> = {}): Handover {
    const readyFile = env['STRAIT_HANDOVER_READY_FILE'];
    return new Handover(who, { waitMs: handoverWaitMsFromEnv(env), onWaiting: log, ...(readyFile ? { readyFile } : {}), ...extra });
  }

  /** "took the node's data path over after N ms", when this process had to wait */
  get tookOverMessage(): string | undefined {
    return this.waitedMs === undefined ? undefined : `took the node's data path over after ${this.waitedMs} ms`;
  }

  /** write the ready file now (the gateway: before it waits for its PSK, which an upgrade already has) */
  sayReady(): void {
    if (this.readySaid || !this.o.readyFile) return;
    this.readySaid = true;
    writeFileSync(this.o.readyFile, '');
  }

  /** ms from the first refusal to the last resource taken over; undefined when nothing was held */
  get waitedMs(): number | undefined {
    return this.waitedSince === undefined ? undefined : Math.round((this.tookAt ?? performance.now()) - this.waitedSince);
  }

  /** `open()` (a bind, a TUN open), again every 50 ms while `what` is held elsewhere and the wait lasts */
  async open<T>(what: string, open: () => T | Promise<T>): Promise<T> {
    this.sayReady();
    this.deadline ??= performance.now() + (this.o.waitMs ?? 0);
    for (;;) {
      try {
        const taken = await open();
        if (this.waitedSince !== undefined) this.tookAt = performance.now();
        return taken;
      } catch (err) {
        if (!HELD.test(err instanceof Error ? err.message : String(err)) || performance.now() >= this.deadline) throw err;
        if (this.waitedSince === undefined) {
          this.waitedSince = performance.now();
          if (this.o.announceSuccessor) this.listenAsSuccessor();
          this.o.onWaiting?.(
            `${what} is held by another process on this node (the ${this.who} this one replaces, in a rolling update): taking the data path over when it stops (waiting up to ${Math.round((this.o.waitMs ?? 0) / 1000)} s)`,
          );
        }
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  /** the abstract socket name of this kind of daemon's waiting successor */
  private get successorSocket(): string {
    return `\0strait-${this.who.replace(/[^a-z0-9]+/gi, '-')}-successor`;
  }

  private listenAsSuccessor(): void {
    const server = createServer((c) => c.end());
    // another successor already listening (two surges at once) or no abstract sockets: the
    // process being replaced then releases what it holds, as before
    server.on('error', () => {
      if (this.successorServer === server) this.successorServer = undefined;
    });
    server.listen(this.successorSocket);
    server.unref();
    this.successorServer = server;
  }

  /** this process has started (whatever it waited for is its own): it is nobody's successor any more */
  done(): void {
    this.successorServer?.close();
    this.successorServer = undefined;
  }

  /**
   * Stopping: is a successor on this node waiting to take over? Only when this process was told
   * to wait too (a rolling update's daemons); never its own socket. A listening successor
   * accepts at once and a missing one refuses at once; the 2-s bound is for neither, and must
   * not be short: on a node busy with a whole release rolling, the timer's phase of the event
   * loop came before the connect's and said "no" to a successor that was there (300 ms bound,
   * real clusters, 2026-11-29).
   */
  successorWaiting(): Promise<boolean> {
    if (!this.o.waitMs || this.successorServer) return Promise.resolve(false);
    return new Promise((resolve) => {
      const c = connect(this.successorSocket);
      const end = (yes: boolean): void => {
        clearTimeout(t);
        c.destroy();
        resolve(yes);
      };
      const t = setTimeout(() => end(false), SUCCESSOR_ASK_MS);
      c.once('connect', () => end(true));
      c.once('error', () => end(false));
    });
  }
}

/**
 * $STRAIT_HANDOVER_WAIT_S: how long a starting daemon waits for the one it replaces on this
 * node (deploy/: 120, with maxSurge); unset or 0: it fails at once, as in the local world.
 */
export function handoverWaitMsFromEnv(env: NodeJS.ProcessEnv): number {
  const v = env['STRAIT_HANDOVER_WAIT_S'];
  if (v === undefined || v === '') return 0;
  if (!/^[0-9]{1,4}$/.test(v) || Number(v) > 3600) throw E.configInvalid('STRAIT_HANDOVER_WAIT_S', v, 'a whole number of seconds from 0 to 3600');
  return Number(v) * 1000;
}
