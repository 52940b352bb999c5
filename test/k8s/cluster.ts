// Test helper: a real kube-apiserver (built from the Go module proxy by
// test/k8s/build-apiserver.sh) on top of a real etcd (Debian's etcd-server), both on
// loopback ports, in temp dirs, gone when stop() returns.
//
//   const k8s = await startTestCluster();          // or `skip` when it cannot be built
//   if ('skip' in k8s) { t.skip(k8s.skip); return; }
//   ... k8s.kubeconfig (YAML text), k8s.kubeconfigPath, k8s.kubectl(...) ...
//   await k8s.stop();
//
// Tests skip ONLY when the binary cannot be built (no Go toolchain, no etcd); with
// CI=true that is a failure instead.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort } from '../helpers/free-port.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const buildScript = join(root, 'test', 'k8s', 'build-apiserver.sh');

export interface TestCluster {
  /** kubeconfig YAML (admin token, the serving CA) */
  kubeconfig: string;
  kubeconfigPath: string;
  server: string;
  token: string;
  /** PEM of the CA that signed the serving certificate */
  caPem: string;
  /** directory for the test's own files; removed by stop() */
  dir: string;
  /** run kubectl against this cluster; returns status/stdout/stderr */
  kubectl(args: string[], input?: string): { status: number; stdout: string; stderr: string };
  /** the same without blocking the event loop (for servers in the test process, e.g. webhooks) */
  kubectlAsync(args: string[], input?: string): Promise<{ status: number; stdout: string; stderr: string }>;
  /** etcd's client URL (its v3 JSON gateway answers on it too) */
  etcdUrl: string;
  /** compact etcd's history up to now: older resourceVersions answer 410 Gone */
  compactEtcd(): Promise<void>;
  /** stop kube-apiserver (etcd keeps the data); startApiserver() brings it back on the same port */
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  /** stop kube-apiserver and etcd, remove every file */
  stop(): Promise<void>;
}

export type StartResult = TestCluster | { skip: string };

/** Where build-apiserver.sh caches the binaries. */
export function cacheDir(): string {
  const mod = readFileSync(join(root, 'test', 'k8s', 'apiserver', 'go.mod'), 'utf8');
  const version = /^require k8s\.io\/kubernetes (\S+)/m.exec(mod)?.[1] ?? 'unknown';
  return join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'strait', 'k8s', version);
}

let ensured: { apiserver: string; kubectl: string } | { skip: string } | undefined;

/** Run the build script without blocking the event loop; resolves with its exit status and stdout. */
function runBuild(args: string[]): Promise<{ status: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [buildScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.on('error', () => resolve({ status: 1, stdout }));
    child.on('close', (code) => resolve({ status: code ?? 1, stdout }));
  });
}

/** Build (or find in the cache) kube-apiserver and kubectl. The first build takes minutes. */
export async function ensureBinaries(): Promise<{ apiserver: string; kubectl: string } | { skip: string }> {
  if (ensured) return ensured;
  const ci = process.env['CI'] === 'true';
  const fail = (why: string): { skip: string } => {
    if (ci) throw new Error(`CI=true: the Kubernetes tests must run, but ${why}`);
    return { skip: `kube-apiserver unavailable (${why}); run test/k8s/build-apiserver.sh` };
  };
  if (spawnSync('etcd', ['--version'], { encoding: 'utf8' }).status !== 0) {
    return (ensured = fail("'etcd' is not installed (Debian: etcd-server; scripts/setup-system.sh installs it)"));
  }
  const cache = cacheDir();
  let apiserver = join(cache, 'kube-apiserver');
  if (!existsSync(apiserver)) {
    if (spawnSync('go', ['version']).status !== 0) return (ensured = fail("no Go toolchain ('go') to build it with"));
    // slow the first time (minutes); cached afterwards
    const r = await runBuild([]);
    if (r.status !== 0) return (ensured = fail(`test/k8s/build-apiserver.sh failed with status ${r.status}`));
    apiserver = join(r.stdout.trim().split('\n').pop() ?? cache, 'kube-apiserver');
  }
  const kubectl = existsSync(join(cache, 'kubectl')) ? join(cache, 'kubectl') : 'kubectl';
  if (spawnSync(kubectl, ['version', '--client'], { encoding: 'utf8' }).status !== 0) {
    const r = await runBuild(['--kubectl']);
    if (r.status !== 0) return (ensured = fail('kubectl is missing and could not be built'));
    return (ensured = { apiserver, kubectl: join(cache, 'kubectl') });
  }
  return (ensured = { apiserver, kubectl });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function httpsGet(url: string, ca: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(url, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (e) => resolve({ status: 0, body: String(e) }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/**
 * The name of the etcd member answering on 127.0.0.1:`port` (the v3 gateway's member list),
 * or undefined while none answers: a test's kube-apiserver must use its own etcd, not one
 * another test started on the same port between picking it and binding it.
 */
function etcdMemberName(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v3/cluster/member/list', method: 'POST', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => {
        try {
          resolve((JSON.parse(body) as { members?: { name?: string }[] }).members?.[0]?.name);
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end('{}');
  });
}

/** A CA and a serving certificate for 127.0.0.1/localhost, made with openssl. */
export function makeServingCert(dir: string, cn: string, sans: string): { caPem: string; certPath: string; keyPath: string } {
  const p = (f: string): string => join(dir, f);
  const run = (args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  run([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${cn}-ca`,
    '-keyout',
    p(`${cn}-ca.key`),
    '-out',
    p(`${cn}-ca.crt`),
  ]);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${cn}`, '-keyout', p(`${cn}.key`), '-out', p(`${cn}.csr`)]);
  writeFileSync(p(`${cn}.ext`), `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\n`);
  run([
    'x509',
    '-req',
    '-in',
    p(`${cn}.csr`),
    '-CA',
    p(`${cn}-ca.crt`),
    '-CAkey',
    p(`${cn}-ca.key`),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    p(`${cn}.ext`),
    '-out',
    p(`${cn}.crt`),
  ]);
  return { caPem: readFileSync(p(`${cn}-ca.crt`), 'utf8'), certPath: p(`${cn}.crt`), keyPath: p(`${cn}.key`) };
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

function start(cmd: string, args: string[], logPath: string): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  const keep = (d: Buffer): void => {
    chunks.push(d);
    if (chunks.length > 400) chunks.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', () => {
    live.delete(child);
    try {
      writeFileSync(logPath, Buffer.concat(chunks));
    } catch {
      /* dir gone */
    }
  });
  (child as ChildProcess & { logTail: () => string }).logTail = () => Buffer.concat(chunks).toString('utf8').slice(-4000);
  live.add(child);
  return child;
}

function tail(c: ChildProcess): string {
  return (c as ChildProcess & { logTail?: () => string }).logTail?.() ?? '';
}

async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

export interface StartOptions {
  /** extra kube-apiserver flags */
  apiserverArgs?: string[];
  /** admission plugins to turn off besides ServiceAccount (e.g. NamespaceLifecycle) */
  disableAdmissionPlugins?: string[];
}

/**
 * Start etcd + kube-apiserver; resolves when /readyz says ok (or { skip }). The ports are
 * picked free and then bound by etcd and kube-apiserver: another test can take one in between,
 * so a start that fails with "address already in use" starts over on new ports (3 tries).
 */
export async function startTestCluster(opts: StartOptions = {}): Promise<StartResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startTestClusterOnce(opts);
    } catch (e) {
      if (attempt >= 3 || !/address already in use/.test(String(e))) throw e;
      console.log(`# test cluster: a port was taken between picking and binding it (attempt ${attempt}): starting over on new ports`);
    }
  }
}

async function startTestClusterOnce(opts: StartOptions): Promise<StartResult> {
  const bins = await ensureBinaries();
  if ('skip' in bins) return bins;
  const dir = mkdtempSync(join(tmpdir(), 'strait-k8s-'));
  // etcd fsyncs on every write; a tmpfs keeps it fast on a shared machine
  const etcdDir = existsSync('/dev/shm') ? mkdtempSync(join('/dev/shm', 'strait-etcd-')) : join(dir, 'etcd');
  const children: ChildProcess[] = [];
  const cleanup = async (): Promise<void> => {
    for (const c of children.reverse()) await stopChild(c);
    rmSync(dir, { recursive: true, force: true });
    rmSync(etcdDir, { recursive: true, force: true });
  };
  try {
    const [clientPort, peerPort, securePort] = [await freeTcpPort(), await freeTcpPort(), await freeTcpPort()];
    // a name of its own: the member list tells this etcd from another test's on the same port
    const etcdName = `strait-test-${randomBytes(4).toString('hex')}`;
    const etcd = start(
      'etcd',
      [
        '--name',
        etcdName,
        '--data-dir',
        etcdDir,
        '--listen-client-urls',
        `http://127.0.0.1:${clientPort}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${clientPort}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peerPort}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peerPort}`,
        '--initial-cluster',
        `${etcdName}=http://127.0.0.1:${peerPort}`,
        '--log-level',
        'warn',
        '--logger',
        'zap',
        '--quota-backend-bytes',
        String(256 * 1024 * 1024),
      ],
      join(dir, 'etcd.log'),
    );
    children.push(etcd);

    // the API server starts on this etcd only: another test's etcd on the port (it bound it
    // first, ours exits "address already in use") starts over on new ports
    for (const deadline = Date.now() + 60_000; ; ) {
      const name = await etcdMemberName(clientPort);
      if (name === etcdName) break;
      if (name !== undefined) throw new Error(`etcd: 127.0.0.1:${clientPort} answers as ${name}, another test's (address already in use)`);
      if (etcd.exitCode !== null) throw new Error(`etcd exited (${etcd.exitCode}):\n${tail(etcd)}`);
      if (Date.now() > deadline) throw new Error(`etcd not answering on 127.0.0.1:${clientPort} after 60 s:\n${tail(etcd)}`);
      await sleep(100);
    }
    const { caPem, certPath, keyPath } = makeServingCert(dir, 'kube-apiserver', 'IP:127.0.0.1,DNS:localhost');
    // service account signing key
    execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', join(dir, 'sa.key')], { stdio: 'ignore' });
    execFileSync('openssl', ['pkey', '-in', join(dir, 'sa.key'), '-pubout', '-out', join(dir, 'sa.pub')], { stdio: 'ignore' });
    const token = randomBytes(24).toString('hex');
    writeFileSync(join(dir, 'tokens.csv'), `${token},strait-admin,strait-admin-uid,"system:masters"\n`, { mode: 0o600 });

    const apiserverArgs = [
      `--etcd-servers=http://127.0.0.1:${clientPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${securePort}`,
      `--tls-cert-file=${certPath}`,
      `--tls-private-key-file=${keyPath}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      // no controller-manager runs: nothing would create the "default" ServiceAccount
      `--disable-admission-plugins=${['ServiceAccount', ...(opts.disableAdmissionPlugins ?? [])].join(',')}`,
      '--allow-privileged=true',
      '--enable-priority-and-fairness=false',
      '--endpoint-reconciler-type=none',
      '--profiling=false',
      '--anonymous-auth=false',
      '--v=0',
      ...(opts.apiserverArgs ?? []),
    ];
    const server = `https://127.0.0.1:${securePort}`;
    let apiserver: ChildProcess | undefined;
    const startApiserver = async (): Promise<void> => {
      const proc = start(bins.apiserver, apiserverArgs, join(dir, 'kube-apiserver.log'));
      apiserver = proc;
      children.push(proc);
      const deadline = Date.now() + 180_000;
      for (;;) {
        if (etcd.exitCode !== null) throw new Error(`etcd exited (${etcd.exitCode}):\n${tail(etcd)}`);
        if (proc.exitCode !== null) throw new Error(`kube-apiserver exited (${proc.exitCode}):\n${tail(proc)}`);
        const r = await httpsGet(`${server}/readyz`, caPem, token);
        if (r.status === 200) return;
        if (Date.now() > deadline) throw new Error(`kube-apiserver not ready after 180 s (last: ${r.status} ${r.body.slice(0, 400)}):\n${tail(proc)}`);
        await sleep(300);
      }
    };
    await startApiserver();

    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      'current-context: strait-test',
      'preferences: {}',
      'clusters:',
      '- name: strait-test',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
      'users:',
      '- name: strait-admin',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: strait-test',
      '  context:',
      '    cluster: strait-test',
      '    user: strait-admin',
      '',
    ].join('\n');
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    mkdirSync(join(dir, 'work'), { recursive: true });
    return {
      kubeconfig,
      kubeconfigPath,
      server,
      token,
      caPem,
      dir: join(dir, 'work'),
      kubectl(args: string[], input?: string) {
        const r = spawnSync(bins.kubectl, ['--kubeconfig', kubeconfigPath, ...args], {
          encoding: 'utf8',
          input,
          timeout: 60_000,
          env: { ...process.env, KUBECONFIG: kubeconfigPath, HOME: dir },
        });
        return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
      },
      kubectlAsync(args: string[], input?: string) {
        return new Promise((resolve) => {
          const child = spawn(bins.kubectl, ['--kubeconfig', kubeconfigPath, ...args], {
            env: { ...process.env, KUBECONFIG: kubeconfigPath, HOME: dir },
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          let stdout = '';
          let stderr = '';
          child.stdout.setEncoding('utf8').on('data', (d: string) => {
            stdout += d;
          });
          child.stderr.setEncoding('utf8').on('data', (d: string) => {
            stderr += d;
          });
          const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
          child.on('error', (e) => {
            stderr += String(e);
          });
          child.on('close', (code) => {
            clearTimeout(timer);
            resolve({ status: code ?? 1, stdout, stderr });
          });
          // kubectl may exit before reading stdin (EPIPE): its status and stderr say what happened
          child.stdin.on('error', () => undefined);
          child.stdin.end(input ?? '');
        });
      },
      stop: cleanup,
      etcdUrl: `http://127.0.0.1:${clientPort}`,
      async compactEtcd() {
        const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
          const r = await fetch(`http://127.0.0.1:${clientPort}${path}`, { method: 'POST', body: JSON.stringify(body) });
          if (!r.ok) throw new Error(`etcd ${path}: HTTP ${r.status} ${await r.text()}`);
          return (await r.json()) as Record<string, unknown>;
        };
        const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
        const revision = (range['header'] as { revision: string }).revision;
        await post('/v3/kv/compaction', { revision, physical: true });
      },
      startApiserver,
      async stopApiserver() {
        if (apiserver) await stopChild(apiserver);
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
