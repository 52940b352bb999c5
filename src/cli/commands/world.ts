// strait up | down | status | exec: the local world.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { listenServer } from '../../base/net/index.js';
import { canUseUserNamespaces, privateTreeCommand } from '../../platform/netns/index.js';
import type { WorldState } from '../../world/supervisor/index.js';
import { clearStateDirLock, lockStateDir, type StateDirLock } from '../../world/state-lock/index.js';
import { DAEMON_ENV, DAEMON_NODE_FLAGS } from '../../base/node-flags/index.js';
import { formatJson, formatTable, parseOutputFormat, resolveStateDir, stateFiles, takesGlobals } from '../../platform/cli-kit/index.js';
import {
  downCommand,
  findPod,
  isAlive,
  podExecArgv,
  readWorldRecord,
  removeWorldRecord,
  removeWorldState,
  runningWorld,
  worldStateIn,
  writeWorldRecord,
  type WorldRecord,
} from '../world-file.js';

const here = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
// dist/src/cli/commands/world.js -> dist/daemon/world.js
const SUPERVISOR = here('../../../daemon/world.js');

interface UpOptions {
  world?: string;
  stateDir?: string;
  detach?: boolean;
  fresh?: boolean;
}

function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function summary(rec: WorldState): string {
  const pods = rec.clusters.reduce((n, c) => n + c.pods.length, 0);
  const nodes = rec.clusters.reduce((n, c) => n + c.nodes.length, 0);
  return `strait: world ready in ${rec.bootMs} ms: ${rec.clusters.length} clusters (${rec.clusters.map((c) => c.name).join(', ')}), ${nodes} nodes, ${pods} pods`;
}

/** called with the state dir locked (src/world/state-lock): no other world reads or writes it */
function prepareStateDir(stateDir: string, fresh: boolean, lock: StateDirLock): void {
  if (lock.staleHolder !== undefined) {
    console.log(`strait: took over the lock of state dir ${stateDir} from pid ${lock.staleHolder}, whose world ended without stopping (killed?)`);
  }
  // an earlier run's Applications, policies, Deployments, repositories and keys come back:
  // say so, and how to start clean
  if (fresh) {
    const gone = removeWorldState(stateDir);
    if (gone.length > 0) console.log(`strait: starting a fresh world in ${stateDir} (removed the earlier run's ${gone.join(', ')})`);
  } else if (worldStateIn(stateDir).some((n) => n !== 'world.json')) {
    console.log(`strait: resuming the world in ${stateDir} (its stores, repositories and keys from an earlier run); \`strait up --fresh\` starts clean`);
  }
  mkdirSync(join(stateDir, 'logs'), { recursive: true });
  // leftovers of a world that was killed
  rmSync(stateFiles(stateDir).world, { force: true });
  rmSync(stateFiles(stateDir).storeSocket, { force: true });
}

/**
 * Loopback ports in the host's namespace for the mesh ingress gateways, one per cluster,
 * bound here before the world enters its private namespaces; their descriptors are handed
 * in (the sockets stay in the host's namespace) and the world relays each to its cluster's
 * ingress gateway. STRAIT_INGRESS_HOST_PORT fixes the first cluster's port.
 */
async function bindIngressPorts(count: number, saved: number[]): Promise<{ fd: number; port: number; server: Server }[]> {
  const out: { fd: number; port: number; server: Server }[] = [];
  for (let i = 0; i < count; i++) {
    const fixed = i === 0 ? process.env['STRAIT_INGRESS_HOST_PORT'] : undefined;
    const b = await bindHostPort(fixed !== undefined ? [Number(fixed)] : [saved[i] ?? 0, 0]);
    if (!b) break;
    out.push(b);
  }
  return out;
}

/**
 * The same for the code-hosting server: 127.0.0.1:3000 when free (Gitea's port), else any
 * free port; STRAIT_GITHOST_HOST_PORT picks one. `strait status -o json` reports it (`githost`).
 */
async function bindGithostPort(saved: number | undefined): Promise<{ fd: number; port: number; server: Server } | undefined> {
  const fixed = process.env['STRAIT_GITHOST_HOST_PORT'];
  return bindHostPort(fixed !== undefined ? [Number(fixed)] : [saved ?? 3000, 3000, 0]);
}

/**
 * And for the control module's API (GitOps: strait login, gpg, app): 127.0.0.1:8080 when
 * free, else any free port; STRAIT_CONTROL_HOST_PORT picks one. `strait status` reports it.
 */
async function bindControlPort(saved: number | undefined): Promise<{ fd: number; port: number; server: Server } | undefined> {
  const fixed = process.env['STRAIT_CONTROL_HOST_PORT'];
  return bindHostPort(fixed !== undefined ? [Number(fixed)] : [saved ?? 8080, 8080, 0]);
}

interface HostPorts {
  ingress: { fd: number; port: number; server: Server }[];
  githost: { fd: number; port: number; server: Server } | undefined;
  control: { fd: number; port: number; server: Server } | undefined;
  /** the code-hosting server's host URLs of earlier runs (repoURLs may name them) */
  githostEarlier?: string[];
}

/**
 * The host ports a world of this state dir had (host-ports.json, written by `strait up`):
 * a restarted world binds the same ones again, so saved logins, clone URLs and repoURLs
 * keep working. `githostURLs` lists every host URL the code-hosting server has had, newest
 * last: the control module fetches a repoURL naming any of them inside the world.
 */
interface SavedHostPorts {
  control?: number;
  githost?: number;
  ingress?: number[];
  githostURLs?: string[];
}

const HOST_PORTS_FILE = 'host-ports.json';

function readHostPorts(stateDir: string): SavedHostPorts {
  try {
    const v = JSON.parse(readFileSync(join(stateDir, HOST_PORTS_FILE), 'utf8')) as SavedHostPorts;
    const port = (n: unknown): number | undefined => (Number.isInteger(n) && (n as number) > 0 && (n as number) < 65536 ? (n as number) : undefined);
    return {
      ...(port(v.control) ? { control: port(v.control) } : {}),
      ...(port(v.githost) ? { githost: port(v.githost) } : {}),
      ingress: Array.isArray(v.ingress) ? v.ingress.map(port).filter((n): n is number => n !== undefined) : [],
      githostURLs: Array.isArray(v.githostURLs) ? v.githostURLs.filter((u) => typeof u === 'string' && /^http:\/\/127\.0\.0\.1:\d+$/.test(u)) : [],
    };
  } catch {
    return {};
  }
}

async function bindHostPorts(stateDir: string, ingressCount: number): Promise<HostPorts> {
  const saved = readHostPorts(stateDir);
  const ports: HostPorts = {
    ingress: await bindIngressPorts(ingressCount, saved.ingress ?? []),
    githost: await bindGithostPort(saved.githost),
    control: await bindControlPort(saved.control),
  };
  // a port the last run had and this one could not bind: say where the server is now
  const moved = (what: string, before: number | undefined, now: number | undefined, hint: string): void => {
    if (before !== undefined && now !== undefined && before !== now) {
      console.log(`strait: 127.0.0.1:${before} is taken: the ${what} is on 127.0.0.1:${now} this time (\`strait status\` shows it)${hint}`);
    }
  };
  moved('control API', saved.control, ports.control?.port, `; log in again: strait login 127.0.0.1:${ports.control?.port} --plaintext …`);
  moved('code-hosting server', saved.githost, ports.githost?.port, '; repoURLs naming the old address keep working inside the world (docs/world.md)');
  const githostURL = ports.githost ? `http://127.0.0.1:${ports.githost.port}` : undefined;
  const githostURLs = [...new Set([...(saved.githostURLs ?? []), ...(githostURL ? [githostURL] : [])])].slice(-8);
  const next: SavedHostPorts = {
    ...(ports.control ? { control: ports.control.port } : saved.control ? { control: saved.control } : {}),
    ...(ports.githost ? { githost: ports.githost.port } : saved.githost ? { githost: saved.githost } : {}),
    ingress: ports.ingress.length > 0 ? ports.ingress.map((b) => b.port) : (saved.ingress ?? []),
    githostURLs,
  };
  writeFileSync(join(stateDir, HOST_PORTS_FILE), JSON.stringify(next, null, 2) + '\n');
  return { ...ports, githostEarlier: githostURLs.filter((u) => u !== githostURL) };
}

/** the world holds its own copies of the host ports' sockets once started */
function closeHostPorts(p: HostPorts): void {
  for (const b of p.ingress) b.server.close();
  p.githost?.server.close();
  p.control?.server.close();
}

async function bindHostPort(candidates: number[]): Promise<{ fd: number; port: number; server: Server } | undefined> {
  let server: Server | undefined;
  for (const port of candidates) {
    const s = createServer();
    try {
      await listenServer(s, { port, host: '127.0.0.1' });
      server = s;
      break;
    } catch {
      s.close();
    }
  }
  if (!server) return undefined;
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    server.close();
    return undefined;
  }
  return { fd, port: (server.address() as AddressInfo).port, server };
}

/** Append the host ports' descriptors to `stdio`; the env tells the world which fd is which. */
function hostPortEnv(stdio: (number | 'ignore' | 'inherit' | 'ipc')[], { ingress, githost, control, githostEarlier }: HostPorts): Record<string, string> {
  const env: Record<string, string> = {};
  if (githostEarlier && githostEarlier.length > 0) env['STRAIT_GITHOST_EARLIER_URLS'] = githostEarlier.join(',');
  if (ingress.length > 0) {
    // one per cluster, in the world's order: "fd,fd" and "port,port"
    env['STRAIT_INGRESS_FD'] = ingress.map((b) => String(stdio.push(b.fd) - 1)).join(',');
    env['STRAIT_INGRESS_PORT'] = ingress.map((b) => String(b.port)).join(',');
  }
  if (githost) {
    env['STRAIT_GITHOST_FD'] = String(stdio.push(githost.fd) - 1);
    env['STRAIT_GITHOST_PORT'] = String(githost.port);
  }
  if (control) {
    env['STRAIT_CONTROL_FD'] = String(stdio.push(control.fd) - 1);
    env['STRAIT_CONTROL_PORT'] = String(control.port);
  }
  return env;
}

/** Run the world in the foreground; resolves with the exit code when it ends. */
async function upForeground(stateDir: string, worldFile: string | undefined, ingressCount: number, lock: StateDirLock): Promise<number> {
  const userNamespace = process.getuid?.() !== 0;
  if (userNamespace) {
    const can = canUseUserNamespaces();
    if (!can.ok) throw E.notRoot(`strait up (${can.reason})`);
  }
  const argv = privateTreeCommand([process.execPath, ...DAEMON_NODE_FLAGS, SUPERVISOR, '--state-dir', stateDir, ...(worldFile ? ['--world', worldFile] : [])], {
    userNamespace,
  });
  const logFile = join(stateDir, 'logs', 'world.log');
  const logFd = openSync(logFile, 'a');
  const ports = await bindHostPorts(stateDir, ingressCount);
  // the world's processes share the state dir's lock: it is free only once the last has gone
  const stdio: (number | 'ignore' | 'inherit' | 'ipc')[] = ['ignore', 'inherit', logFd, 'ipc', lock.fd];
  const child = spawn(argv[0] as string, argv.slice(1), {
    stdio,
    env: { ...process.env, ...DAEMON_ENV, STRAIT_USERNS: userNamespace ? '1' : '0', STRAIT_PROC: 'world', ...hostPortEnv(stdio, ports) },
  });
  closeSync(logFd);
  closeHostPorts(ports);
  const startedAt = new Date().toISOString();
  let supervisorPid = 0;
  let stopping = false;
  let failed: string | undefined;
  const findSupervisor = (): number => {
    try {
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
      return kids[0] ?? 0;
    } catch {
      return 0;
    }
  };
  child.on('message', (msg: { type: string; state?: WorldState; error?: { message: string; code?: string } }) => {
    if ((msg.type === 'ready' || msg.type === 'state') && msg.state) {
      supervisorPid ||= findSupervisor();
      const rec: WorldRecord = { version: 1, pid: process.pid, supervisorPid, stateDir, startedAt, ...msg.state };
      writeWorldRecord(stateDir, rec);
      if (msg.type === 'ready') console.log(summary(msg.state));
    } else if (msg.type === 'stopping') {
      stopping = true;
    } else if (msg.type === 'failed') {
      failed = msg.error ? `${msg.error.code ? `${msg.error.code}: ` : ''}${msg.error.message}` : undefined;
    }
  });
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    supervisorPid ||= findSupervisor();
    // the supervisor shuts down in order; the kernel cleans up whatever remains
    if (supervisorPid) process.kill(supervisorPid, 'SIGTERM');
    else child.kill('SIGKILL');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
  // the world stops when its parent asks, whoever the parent is: a supervisor that signals
  // only the process it started (npm, a shell running `a && strait up`) leaves this process
  // orphaned; its parent changes, and the world stops as if signalled
  const parent = process.ppid;
  const orphanWatch =
    parent > 1
      ? setInterval(() => {
          if (process.ppid !== parent) stop();
        }, 250)
      : undefined;
  const code = await new Promise<number>((done) => child.on('exit', (c, s) => done(c ?? (s ? 128 : 1))));
  clearInterval(orphanWatch);
  removeWorldRecord(stateDir, process.pid);
  rmSync(stateFiles(stateDir).storeSocket, { force: true });
  lock.release();
  if (stopping) {
    console.log('strait: world stopped');
    return 0;
  }
  if (failed) console.error(`error ${failed.includes('STRAIT_ERR_') ? failed : `STRAIT_ERR_WORLD_NOT_RUNNING: ${failed}`}\n(log ${logFile})`);
  else console.error(`error STRAIT_ERR_WORLD_NOT_RUNNING: the world ended (exit ${code}); log ${logFile}:\n${tail(logFile)}`);
  return code === 0 ? 1 : code;
}

/**
 * A detached world: the private tree is started in a session of its own, owned by its
 * unshare process (kill that and the world is gone); the supervisor writes world.json.
 */
async function upDetached(stateDir: string, worldFile: string | undefined, ingressCount: number, lock: StateDirLock): Promise<number> {
  const userNamespace = process.getuid?.() !== 0;
  if (userNamespace) {
    const can = canUseUserNamespaces();
    if (!can.ok) throw E.notRoot(`strait up (${can.reason})`);
  }
  const argv = privateTreeCommand(
    [process.execPath, ...DAEMON_NODE_FLAGS, SUPERVISOR, '--state-dir', stateDir, '--record', ...(worldFile ? ['--world', worldFile] : [])],
    { userNamespace, dieWithParent: false },
  );
  const logFile = join(stateDir, 'logs', 'world.log');
  const fd = openSync(logFile, 'a');
  const ports = await bindHostPorts(stateDir, ingressCount);
  // the world's processes share the state dir's lock, and its owner (unshare) is named in it
  const stdio: (number | 'ignore' | 'inherit' | 'ipc')[] = ['ignore', fd, fd, lock.fd];
  const child = spawn(argv[0] as string, argv.slice(1), {
    detached: true,
    stdio,
    env: { ...process.env, ...DAEMON_ENV, STRAIT_USERNS: userNamespace ? '1' : '0', STRAIT_PROC: 'world', ...hostPortEnv(stdio, ports) },
  });
  if (child.pid) lock.setHolder(child.pid);
  closeSync(fd);
  closeHostPorts(ports);
  child.unref();
  let exited: number | null = null;
  child.on('exit', (c) => {
    exited = c ?? 1;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const rec = readWorldRecord(stateDir);
    if (rec && rec.pid === child.pid && rec.status === 'ready') {
      console.log(`${summary(rec)}; running in the background (pid ${rec.pid}); '${downCommand(stateDir)}' stops it`);
      lock.hand();
      return 0;
    }
    if (exited !== null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  if (exited === null && child.pid) process.kill(child.pid, 'SIGKILL');
  lock.release();
  console.error(`error STRAIT_ERR_WORLD_NOT_RUNNING: the world did not come up; log ${logFile}:\n${tail(logFile)}`);
  return exited && exited > 0 ? exited : 1;
}

/** "/ → echo.mesh (ISTIO_MUTUAL)" from the ingress gateway's configuration file */
function ingressRoutes(stateDir: string, cluster: string): string {
  try {
    const cfg = JSON.parse(readFileSync(join(stateDir, 'mesh', cluster, 'ingress.json'), 'utf8')) as {
      routes?: { pathPrefix: string; service: string; tls?: { mode?: string } }[];
    };
    const routes = (cfg.routes ?? []).map((r) => `${r.pathPrefix} → ${r.service} (${r.tls?.mode ?? 'DISABLE'})`);
    return routes.length ? routes.join(', ') : 'no routes';
  } catch {
    return 'routes not written yet';
  }
}

function statusText(rec: WorldRecord): string {
  const rows: (string | number | undefined)[][] = [];
  for (const c of rec.clusters) {
    for (const n of c.nodes) rows.push([c.name, 'node', n.name, n.role, n.underlayIP, n.publicIP ?? '', n.podCIDR]);
    for (const p of c.pods) rows.push([c.name, 'pod', `${p.namespace}/${p.name}`, p.image, p.ip, '', p.node]);
    for (const s of c.services)
      rows.push([c.name, 'service', `${s.namespace}/${s.name}`, s.ports.map((p) => `${p.port}/${p.protocol}`).join(','), s.clusterIP ?? 'None', '', '']);
  }
  const head =
    `world ${rec.status} (pid ${rec.pid}, boot ${rec.bootMs} ms, state dir ${rec.stateDir}${rec.userNamespace ? ', user namespace' : ''})\n` +
    `store ${rec.store.available ? rec.store.socket : `unavailable: ${rec.store.reason ?? ''}`}; metrics ${rec.metrics}; logs ${rec.logs}\n`;
  const ingress = rec.clusters
    .map((c) => `ingress ${c.name}: ${c.ingress ? `${c.ingress} → ${ingressRoutes(rec.stateDir, c.name)}` : 'none (no mesh in this world, or no host port)'}\n`)
    .join('');
  // every server a person talks to, as the host reaches it, and as pods and nodes do
  const served = (what: string, host: string | undefined, inWorld: string | undefined, how: string): string =>
    inWorld ? `${what}: ${host ?? 'not published on the host'}${host ? how : ''} (in the world ${inWorld})\n` : '';
  const control = served(
    'control API',
    rec.control,
    rec.inWorld?.control,
    ` — strait login ${rec.control?.replace(/^http:\/\//, '')} --plaintext --username admin --password "$(cat ${join(rec.stateDir, 'control', 'initial-admin-password')})"`,
  );
  const githost = served('githost', rec.githost, rec.inWorld?.githost, '');
  const consoleLine = served('web console', rec.console, rec.inWorld?.console, ' — log in as admin with the same password (strait console --open)');
  const comps = formatTable(
    ['COMPONENT', 'PID', 'READY', 'RESTARTS', 'METRICS'],
    rec.components.map((c) => [c.name, c.pid ?? '', c.ready ? 'yes' : 'no', c.restarts, c.metrics ?? '']),
  );
  return (
    head +
    control +
    consoleLine +
    githost +
    ingress +
    '\n' +
    formatTable(['CLUSTER', 'KIND', 'NAME', 'ROLE/IMAGE/PORTS', 'ADDRESS', 'PUBLIC', 'NODE/CIDR'], rows) +
    '\n' +
    comps
  );
}

/** `strait down`: the supervisor shuts the world down in order, killed after 15 s; the state dir's world record, socket and lock go. */
async function stopWorld(stateDir: string): Promise<void> {
  const rec = readWorldRecord(stateDir);
  if (!rec || !isAlive(rec.pid)) {
    rmSync(stateFiles(stateDir).world, { force: true });
    throw E.worldNotRunning(stateDir);
  }
  // the supervisor shuts down in order; its owner (strait up or unshare) then exits
  process.kill(isAlive(rec.supervisorPid) ? rec.supervisorPid : rec.pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  const gone = (): boolean => !isAlive(rec.pid) && !isAlive(rec.supervisorPid);
  while (!gone() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (!gone()) process.kill(rec.pid, 'SIGKILL');
  while (!gone() && Date.now() < deadline + 5000) await new Promise((r) => setTimeout(r, 25));
  rmSync(stateFiles(stateDir).world, { force: true });
  rmSync(stateFiles(stateDir).storeSocket, { force: true });
  clearStateDirLock(stateDir);
  console.log('strait: world stopped');
}

/** `strait exec`: the program in the pod's network namespace, with the pod's resolv.conf; the exit code is the program's. */
async function execInPod(ref: string, command: string[], stateDir: string | undefined): Promise<void> {
  const dashes = process.argv.indexOf('--');
  const beforeDashes = dashes < 0 ? command : [];
  const option = beforeDashes.find((a) => a.startsWith('-'));
  if (option !== undefined) {
    throw E.usage(
      `${JSON.stringify(option)} is an option of the program, not of strait exec: put the program after --, as in 'strait exec ${ref} -- ${command.join(' ')}'`,
      { value: option },
    );
  }
  const rec = runningWorld(resolveStateDir(stateDir));
  const pod = findPod(rec, ref);
  const argv = podExecArgv(rec, pod.netns, command);
  // a strait command run in the pod acts on this world (its world.json: CIDRs, host URLs)
  // and keeps its own sessions (strait login in a pod never changes the host's current
  // context): the pod's config dir is <state dir>/pod-config/CLUSTER/NAMESPACE/POD
  const podConfig = join(rec.stateDir, 'pod-config', ...ref.split('/'));
  const child = spawn('nsenter', argv, { stdio: 'inherit', env: { ...process.env, STRAIT_STATE_DIR: rec.stateDir, STRAIT_CONFIG_DIR: podConfig } });
  const forward = (sig: NodeJS.Signals) => () => {
    child.kill(sig);
  };
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  process.exitCode = await new Promise<number>((done) => {
    child.on('error', (err) => {
      console.error(`error STRAIT_ERR_SYSTEM_TOOL: nsenter: ${err.message}`);
      done(1);
    });
    // a program killed by a signal exits 128 + its number, as shells report it
    child.on('exit', (code, signal) => done(code ?? 128 + (signal ? osConstants.signals[signal] : 0)));
  });
}

export function registerWorldCommands(program: Command): void {
  takesGlobals(program.command('up'), 'stateDir')
    .description('build the local world (clusters, nodes, pods in private network namespaces) and run it until Ctrl-C or `strait down`')
    .option('--world <file>', 'world file (YAML or JSON); default: the built-in two-cluster world')
    .option('--detach', 'run in the background; return once the world is ready')
    .option('--fresh', 'start clean: remove the world state an earlier run left in the state dir (stores, repositories, keys, logs; nothing else in it)')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<UpOptions>();
      const stateDir = resolveStateDir(opts.stateDir);
      const worldFile = opts.world ? resolve(opts.world) : undefined;
      // loaded only here: status, exec and down stay light
      const { loadWorld } = await import('../../world/world-file/index.js');
      const world = loadWorld(worldFile); // refuse a bad world before building anything
      const ingressCount = world.mesh ? world.clusters.length : 0;
      // before anything in the state dir is read or written: one world per state dir
      const lock = lockStateDir(stateDir, downCommand(stateDir), opts.detach ? null : process.pid);
      try {
        prepareStateDir(stateDir, opts.fresh === true, lock);
        process.exitCode = opts.detach
          ? await upDetached(stateDir, worldFile, ingressCount, lock)
          : await upForeground(stateDir, worldFile, ingressCount, lock);
      } catch (err) {
        lock.release();
        throw err;
      }
    });

  takesGlobals(program.command('down'), 'stateDir')
    .description('stop the world of a state dir; every namespace and interface it made is gone')
    .action(async (_opts: unknown, cmd: Command) => {
      await stopWorld(resolveStateDir(cmd.optsWithGlobals<{ stateDir?: string }>().stateDir));
    });

  takesGlobals(program.command('status'), 'stateDir')
    .description('show the running world: clusters, nodes, pods, services, components')
    .option('-o, --output <format>', 'text or json', 'text')
    .action((_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ stateDir?: string; output?: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const rec = runningWorld(resolveStateDir(opts.stateDir));
      process.stdout.write(format === 'json' ? formatJson(rec) : statusText(rec));
    });

  takesGlobals(program.command('exec'), 'stateDir')
    .description("run a host program inside a pod's network namespace, with the pod's resolv.conf; exits with its exit code")
    .argument('<pod>', 'CLUSTER/NAMESPACE/POD')
    .argument('<command...>', 'program and arguments (put them after --)')
    .usage('[--state-dir DIR] CLUSTER/NAMESPACE/POD -- CMD [ARGS...]')
    // the program's own options (curl -s) without `--` reach the action, which says to add it
    .allowUnknownOption()
    .action(async (ref: string, command: string[], _opts: unknown, cmd: Command) => {
      await execInPod(ref, command, cmd.optsWithGlobals<{ stateDir?: string }>().stateDir);
    });
}
