// Kubernetes mode (docs/kubernetes.md) through the control daemon PROCESS, against a real
// kube-apiserver: deploy/ applied, the daemon started from its entry point
// (dist/daemon/control/main.js, STRAIT_STORE=kubernetes) with a kubeconfig holding the
// strait-control ServiceAccount's token (so deploy/rbac/control.yaml is what it may do).
// It serves the sidecar-injection webhook with a certificate it made and patched into the
// caBundle; runs GitOps signed sync, the mesh CA (istio-ca-root-cert) and, once
// `strait join --kubeconfig` has joined the cluster to a broker deployed with
// `strait deploy-broker --kubeconfig` in the same API server, the ServiceExport sync.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { certificateUris, defaultMeshObjects } from '../../src/mesh/control/index.js';
import { brokerKubeconfig, parseBrokerInfo, PSK_BYTES } from '../../src/multicluster/control/clusterset/index.js';
import { GPG_KEYS_CM, GROUPS } from '../../src/platform/resources/index.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';
import { freeTcpPort } from '../helpers/free-port.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const NS = 'strait-system';
const API = `${GROUPS.gitops}/v1alpha1`;
let cluster: TestCluster | undefined;
let skip: string | undefined;
let daemon: ChildProcess | undefined;
let ready: { api: string; metrics: string; webhookPort: number; store: string } | undefined;
let daemonLog = '';
let world: GpgWorld | undefined;
let repo: TestRepo;
let tmp = '';
const commits: Record<string, string> = {};
let startMs = 0;
let dnsPort = 0;
let meshConfigPort = 0;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    c.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}
const strait = (args: string[]): Promise<{ status: number; stdout: string; stderr: string }> =>
  run(process.execPath, [join(root, 'bin', 'strait.js'), ...args]);

const kubectlJson = async <T>(c: TestCluster, args: string[]): Promise<T | undefined> => {
  const r = await c.kubectlAsync([...args, '-o', 'json']);
  return r.status === 0 ? (JSON.parse(r.stdout) as T) : undefined;
};
const ok = async (c: TestCluster, args: string[], input?: string): Promise<string> => {
  const r = await c.kubectlAsync(args, input);
  assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/**
 * The clusterset IP of the ServiceImport demo/nginx: its spec.ips (one IPv4 address), which
 * is the ClusterIP the API server gave its derived Service (owned by the ServiceImport).
 */
async function clustersetIP(c: TestCluster, log: string): Promise<{ ip: string; cluster: string }> {
  type SI = {
    metadata: { uid: string; annotations?: Record<string, string> };
    spec: { ips?: string[]; ipFamilies?: string[] };
    status?: { clusters?: { cluster: string }[] };
  };
  const si = await waitFor(
    async () => {
      const o = await kubectlJson<SI>(c, ['get', 'serviceimports.multicluster.x-k8s.io', 'nginx', '-n', 'demo']);
      return o?.spec.ips?.length ? o : undefined;
    },
    30_000,
    `spec.ips of the ServiceImport demo/nginx\n${log.slice(-3000)}`,
  );
  assert.deepEqual(si.spec.ipFamilies, ['IPv4']);
  const name = si.metadata.annotations?.['multicluster.kubernetes.io/derived-service'] ?? '';
  assert.match(name, /^derived-[0-9a-v]{10}$/);
  const svc = await kubectlJson<{ metadata: { ownerReferences?: { kind: string; uid: string }[] }; spec: { clusterIP: string } }>(c, [
    'get',
    'service',
    name,
    '-n',
    'demo',
  ]);
  assert.equal(svc?.spec.clusterIP, si.spec.ips![0], "spec.ips is the derived Service's ClusterIP");
  assert.deepEqual(
    svc?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.uid}`),
    [`ServiceImport/${si.metadata.uid}`],
  );
  return { ip: si.spec.ips![0]!, cluster: si.status?.clusters?.[0]?.cluster ?? '' };
}

/**
 * The control daemon process from its entry point in Kubernetes mode (webhook on loopback), with
 * `env` on top; resolves its ready line. stderr goes to `onLog`.
 */
function startControl(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  onLog: (text: string) => void,
): { child: ChildProcess; ready: Promise<NonNullable<typeof ready>> } {
  const child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'daemon', 'control', 'main.js'),
      '--state-dir',
      stateDir,
      '--namespace',
      NS,
      '--listen',
      '127.0.0.1:0',
      '--insecure',
      '--metrics-listen',
      '127.0.0.1:0',
      '--poll-interval',
      '3600',
    ],
    {
      env: {
        ...process.env,
        STRAIT_STORE: 'kubernetes',
        STRAIT_WEBHOOK_LISTEN: '127.0.0.1',
        STRAIT_WEBHOOK_HOSTS: '127.0.0.1',
        STRAIT_SIDECAR_IMAGE: 'strait:0.1.0',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (t: string) => {
    log = (log + t).slice(-20_000);
    onLog(t);
  });
  const readyLine = new Promise<NonNullable<typeof ready>>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      out += t;
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) resolve(JSON.parse(line) as NonNullable<typeof ready>);
    });
    child.once('exit', (code) => reject(new Error(`control daemon exited with ${code}:\n${log}\n${out}`)));
  });
  return { child, ready: readyLine };
}

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
    const c = r;
    tmp = mkdtempSync(join(tmpdir(), 'strait-control-k8s-'));
    // deploy/ as a user applies it; the webhook pointed at this machine's loopback (no Service routing here)
    await ok(c, ['create', 'namespace', NS]);
    await ok(c, ['apply', '-k', join(root, 'deploy')]);
    await ok(c, ['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', '-l', 'app.kubernetes.io/part-of=strait']);
    const webhookPort = await freeTcpPort();
    dnsPort = await freeTcpPort();
    meshConfigPort = await freeTcpPort();
    await ok(c, [
      'patch',
      'mutatingwebhookconfiguration',
      'strait-sidecar-injector',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/webhooks/0/clientConfig', value: { url: `https://127.0.0.1:${webhookPort}/inject` } },
        { op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Fail' },
      ]),
    ]);
    // the control module's identity: a token of its ServiceAccount (TokenRequest)
    const token = (await ok(c, ['create', 'token', 'strait-control', '-n', NS, '--duration', '2h'])).trim();
    const kubeconfig = join(tmp, 'control.kubeconfig');
    writeFileSync(kubeconfig, brokerKubeconfig(c.server, c.caPem, token), { mode: 0o600 });
    // GitOps material: keys, a repo with an unsigned and a signed commit, the project
    world = createGpgWorld();
    repo = createRepo(world);
    const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: ${value}\n`;
    commits['unsigned'] = repo.commit({ 'app/cm.yaml': cm('unsigned') }, 'unsigned');
    commits['alice'] = repo.commit({ 'app/cm.yaml': cm('alice') }, 'alice', world.keys.alice);
    const objs = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: GPG_KEYS_CM, namespace: NS }, data: { [world.keys.alice.keyID]: world.keys.alice.armored } },
      {
        apiVersion: API,
        kind: 'AppProject',
        metadata: { name: 'secure', namespace: NS },
        spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.alice.keyID }] },
      },
    ];
    await ok(c, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }));
    // destinations of sync: the namespaces exist and strait-control-sync is bound there (docs/kubernetes.md)
    for (const ns of ['ns-signed', 'ns-unsigned']) {
      await ok(c, ['create', 'namespace', ns]);
      await ok(c, ['create', 'rolebinding', 'strait-control-sync', '-n', ns, '--clusterrole', 'strait-control-sync', `--serviceaccount=${NS}:strait-control`]);
    }
    // the mesh: a control plane whose member roll names "bookinfo"
    await ok(c, ['create', 'namespace', 'bookinfo']);
    await ok(c, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: defaultMeshObjects(['bookinfo']) }));

    startMs = Date.now();
    const started = startControl(
      join(tmp, 'state'),
      {
        KUBECONFIG: kubeconfig,
        STRAIT_WEBHOOK_PORT: String(webhookPort),
        STRAIT_DNS_LISTEN: '127.0.0.1',
        STRAIT_DNS_PORT: String(dnsPort),
        STRAIT_MESH_CONFIG_LISTEN: '127.0.0.1',
        STRAIT_MESH_CONFIG_PORT: String(meshConfigPort),
      },
      (t) => {
        daemonLog = (daemonLog + t).slice(-20_000);
      },
    );
    daemon = started.child;
    ready = await started.ready;
    console.log(`# control daemon ready in ${Date.now() - startMs} ms (Kubernetes store, webhook on ${ready?.webhookPort})`);
  },
  { timeout: 3_600_000 },
);

after(async () => {
  if (daemon && daemon.exitCode === null) {
    const exited = new Promise((r) => daemon!.once('exit', r));
    daemon.kill('SIGTERM');
    await exited;
  }
  world?.cleanup();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  await cluster?.stop();
});

describe('the control daemon process on a real kube-apiserver (STRAIT_STORE=kubernetes, strait-control ServiceAccount)', () => {
  test("readiness (GET /readyz on the metrics port, deploy/control.yaml's probe): 503 naming the webhook configuration until its caBundle is written (missing, no webhooks, caBundle removed later), then 200", {
    timeout: 120_000,
  }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    // the daemon of before() is ready and has written its caBundle
    const readyz = (metrics: string): Promise<{ status: number; body: string }> =>
      fetch(metrics.replace(/\/metrics$/, '/readyz')).then(async (r) => ({ status: r.status, body: await r.text() }));
    await waitFor(async () => (await readyz(ready!.metrics)).status === 200 || undefined, 20_000, '/readyz 200 from the first daemon');
    const cfg = await kubectlJson<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(c, [
      'get',
      'mutatingwebhookconfiguration',
      'strait-sidecar-injector',
    ]);
    assert.ok(cfg?.webhooks[0]?.clientConfig.caBundle, 'ready only once the caBundle is there');
    // a second daemon whose webhook configuration does not exist yet: up, but not ready (the
    // cluster's admin credentials: strait-control's role may patch only strait-sidecar-injector)
    const name = 'strait-readyz-injector';
    const kubeconfig = c.kubeconfigPath;
    const started = startControl(
      join(tmp, 'state-readyz'),
      {
        KUBECONFIG: kubeconfig,
        STRAIT_WEBHOOK_PORT: '0',
        STRAIT_WEBHOOK_CONFIG: name,
        STRAIT_DNS_PORT: 'off',
        STRAIT_MESH_CONFIG_PORT: 'off',
        STRAIT_WEBHOOK_RECHECK_SECONDS: '1',
      },
      () => undefined,
    );
    const d = started.child;
    try {
      const second = await started.ready;
      const before = await readyz(second.metrics);
      assert.equal(before.status, 503, before.body);
      assert.match(before.body, new RegExp(`waiting for the caBundle of MutatingWebhookConfiguration ${name}`));
      const config = (webhooks: unknown[]): string =>
        JSON.stringify({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          metadata: { name },
          webhooks,
        });
      // a configuration with no webhooks: nothing would call the injector, still not ready
      await ok(c, ['apply', '-f', '-'], config([]));
      await new Promise((r) => setTimeout(r, 4500)); // two retries (2 s)
      assert.equal((await readyz(second.metrics)).status, 503, 'not ready while the configuration has no webhooks');
      // the configuration as `kubectl apply -k deploy/` makes it: patched, ready
      await ok(
        c,
        ['apply', '-f', '-'],
        config([
          {
            name: 'readyz.strait.dev',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Ignore',
            clientConfig: { url: 'https://127.0.0.1:1/inject' },
            objectSelector: { matchLabels: { 'strait.dev/readyz-test': 'never' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          },
        ]),
      );
      await waitFor(async () => (await readyz(second.metrics)).status === 200 || undefined, 30_000, '/readyz 200 after the configuration appeared');
      const caBundle = async (): Promise<string | undefined> =>
        (await kubectlJson<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(c, ['get', 'mutatingwebhookconfiguration', name]))?.webhooks[0]
          ?.clientConfig.caBundle;
      const written = await caBundle();
      assert.match(Buffer.from(written ?? '', 'base64').toString('utf8'), /BEGIN CERTIFICATE/);
      // the caBundle removed later (a re-apply from elsewhere): found by the recheck, written again
      await ok(c, [
        'patch',
        'mutatingwebhookconfiguration',
        name,
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'remove', path: '/webhooks/0/clientConfig/caBundle' }]),
      ]);
      await waitFor(async () => (await caBundle()) === written || undefined, 30_000, 'the caBundle written again');
      await waitFor(async () => (await readyz(second.metrics)).status === 200 || undefined, 30_000, '/readyz 200 again');
    } finally {
      if (d.exitCode === null) {
        const exited = new Promise((r) => d.once('exit', r));
        d.kill('SIGTERM');
        await exited;
      }
      await c.kubectlAsync(['delete', 'mutatingwebhookconfiguration', name, '--ignore-not-found']);
    }
  });

  test('a pod created with sidecar.istio.io/inject: "true" is stored with the sidecar the daemon\'s webhook added (caBundle patched by the daemon)', {
    timeout: 60_000,
  }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    const bundle = await waitFor(
      async () => {
        const cfg = await kubectlJson<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(c, [
          'get',
          'mutatingwebhookconfiguration',
          'strait-sidecar-injector',
        ]);
        return cfg?.webhooks[0]?.clientConfig.caBundle;
      },
      20_000,
      'caBundle written by the daemon',
    );
    assert.match(Buffer.from(bundle, 'base64').toString('utf8'), /BEGIN CERTIFICATE/);
    const t0 = Date.now();
    // serviceAccountName: the ServiceAccount admission plugin sets it in every real cluster
    // (before the webhooks run); this API server runs without it
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'bookinfo', labels: { app: 'web', 'sidecar.istio.io/inject': 'true' } },
      spec: { serviceAccountName: 'default', containers: [{ name: 'web', image: 'nginx' }] },
    };
    // failurePolicy Fail: the create fails unless the API server reached the daemon over TLS it trusts
    await ok(c, ['create', '-f', '-'], JSON.stringify(pod));
    const createMs = Date.now() - t0;
    const got = await kubectlJson<{
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { name: string; image: string }[]; initContainers?: { name: string }[] };
    }>(c, ['get', 'pod', 'web', '-n', 'bookinfo']);
    assert.deepEqual(
      got?.spec.containers.map((x) => x.name),
      ['web', 'strait-proxy'],
    );
    assert.deepEqual(
      got?.spec.initContainers?.map((x) => x.name),
      ['strait-init'],
    );
    assert.equal(got?.spec.containers[1]?.image, 'strait:0.1.0');
    assert.ok(got?.metadata.annotations?.['sidecar.istio.io/status'], 'status annotation');
    // a pod without the label is left alone (objectSelector) and still admitted
    await ok(c, ['create', '-f', '-'], JSON.stringify({ ...pod, metadata: { name: 'plain', namespace: 'bookinfo' } }));
    const plain = await kubectlJson<{ spec: { containers: { name: string }[] } }>(c, ['get', 'pod', 'plain', '-n', 'bookinfo']);
    assert.deepEqual(
      plain?.spec.containers.map((x) => x.name),
      ['web'],
    );
    console.log(`# pod create through the daemon's webhook: ${createMs} ms (kubectl included)`);
  });

  test('mesh CA: istio-ca-root-cert appears in the member namespace, with the root kept in Secret strait-mesh-ca', { timeout: 60_000 }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    const cm = await waitFor(
      () => kubectlJson<{ data: Record<string, string> }>(c, ['get', 'configmap', 'istio-ca-root-cert', '-n', 'bookinfo']),
      20_000,
      'istio-ca-root-cert',
    );
    const secret = await kubectlJson<{ data: Record<string, string> }>(c, ['get', 'secret', 'strait-mesh-ca', '-n', NS]);
    assert.equal(cm.data['root-cert.pem'], Buffer.from(secret?.data['ca.crt'] ?? '', 'base64').toString('utf8'));
    assert.match(cm.data['root-cert.pem'] ?? '', /BEGIN CERTIFICATE/);
    // not in a namespace outside the mesh
    assert.equal(await kubectlJson(c, ['get', 'configmap', 'istio-ca-root-cert', '-n', 'ns-signed']), undefined);
  });

  test("mesh configuration service: a pod-bound token (audience strait) gets its own pod's configuration; other tokens 401; outside the mesh pass-through; a long poll sees a new mode; the sidecar process follows it", {
    timeout: 120_000,
  }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    const base = `https://127.0.0.1:${meshConfigPort}`;
    // a pod of the member namespace with its own ServiceAccount (through the webhook: injected)
    await ok(c, ['create', 'serviceaccount', 'web-sa', '-n', 'bookinfo']);
    await ok(
      c,
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'meshpod', namespace: 'bookinfo', labels: { app: 'meshpod', 'sidecar.istio.io/inject': 'true' } },
        spec: { serviceAccountName: 'web-sa', containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 8080 }] }] },
      }),
    );
    const injected = await kubectlJson<{ metadata: { uid: string }; spec: { containers: { name: string; args?: string[] }[]; volumes?: { name: string }[] } }>(
      c,
      ['get', 'pod', 'meshpod', '-n', 'bookinfo'],
    );
    const proxy = injected?.spec.containers.find((x) => x.name === 'strait-proxy');
    assert.equal(proxy?.args?.[proxy.args.indexOf('--control') + 1], 'https://strait-control.strait-system.svc:' + String(meshConfigPort));
    assert.deepEqual(
      injected?.spec.volumes?.map((v) => v.name),
      ['strait-token', 'strait-root'],
    );
    // a pod outside the mesh (no member namespace): not injected, but its token is answered
    await ok(c, ['create', 'serviceaccount', 'out-sa', '-n', 'ns-signed']);
    await ok(
      c,
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'outpod', namespace: 'ns-signed', labels: { 'sidecar.istio.io/inject': 'true' } },
        spec: { serviceAccountName: 'out-sa', containers: [{ name: 'web', image: 'nginx' }] },
      }),
    );
    const outPod = await kubectlJson<{ metadata: { uid: string }; spec: { containers: { name: string }[] } }>(c, ['get', 'pod', 'outpod', '-n', 'ns-signed']);
    assert.deepEqual(
      outPod?.spec.containers.map((x) => x.name),
      ['web'],
      'no sidecar outside the member namespaces',
    );
    const bound = async (sa: string, ns: string, pod: string, uid: string): Promise<string> =>
      (
        await ok(c, [
          'create',
          'token',
          sa,
          '-n',
          ns,
          '--audience',
          'strait',
          '--bound-object-kind',
          'Pod',
          '--bound-object-name',
          pod,
          '--bound-object-uid',
          uid,
        ])
      ).trim();
    const token = await bound('web-sa', 'bookinfo', 'meshpod', injected!.metadata.uid);
    const outToken = await bound('out-sa', 'ns-signed', 'outpod', outPod!.metadata.uid);
    const apiToken = (await ok(c, ['create', 'token', 'web-sa', '-n', 'bookinfo'])).trim();
    const meshRoot =
      (await kubectlJson<{ data: Record<string, string> }>(c, ['get', 'configmap', 'istio-ca-root-cert', '-n', 'bookinfo']))?.data['root-cert.pem'] ?? '';
    const rootFile = join(tmp, 'mesh-root.pem');
    writeFileSync(rootFile, meshRoot);
    const tokenFile = join(tmp, 'mesh-token');
    writeFileSync(tokenFile, token);
    // real curl, verifying the service's certificate against the mesh root
    const get = async (tok: string | undefined, extra: string[] = [], path = '/v1/sidecar'): Promise<{ status: number; headers: string; body: string }> => {
      const r = await run('curl', ['-sS', '-i', '--cacert', rootFile, ...(tok ? ['-H', `Authorization: Bearer ${tok}`] : []), ...extra, `${base}${path}`]);
      assert.equal(r.status, 0, r.stderr);
      const at = r.stdout.indexOf('\r\n\r\n');
      return { status: Number(/^HTTP\/[0-9.]+ ([0-9]{3})/.exec(r.stdout)?.[1]), headers: r.stdout.slice(0, at), body: r.stdout.slice(at + 4) };
    };
    assert.equal((await get(undefined)).status, 401);
    assert.equal((await get(apiToken)).status, 401, 'a token for the API server (another audience) is refused');
    assert.equal((await get(`${token}x`)).status, 401);
    const first = await waitFor(
      async () => {
        const r = await get(token);
        return r.status === 200 ? r : undefined;
      },
      20_000,
      "the pod's configuration",
    );
    assert.match(first.headers, /strait-mesh: member/i);
    const cfg = JSON.parse(first.body) as { identity: { certPem: string }; inbound: { defaultMode: string } };
    assert.deepEqual(certificateUris(cfg.identity.certPem), ['spiffe://cluster.local/ns/bookinfo/sa/web-sa']);
    const etag = /^etag: ("[^"]+")/im.exec(first.headers)?.[1] as string;
    assert.ok(etag);
    assert.equal((await get(token, ['-H', `If-None-Match: ${etag}`])).status, 304);
    const out = await get(outToken);
    assert.equal(out.status, 200);
    assert.match(out.headers, /strait-mesh: outside/i);
    assert.deepEqual(JSON.parse(out.body), { inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'DISABLE' } } });
    assert.equal((await get(token, [], '/v1/ingress')).status, 403, 'a pod is not the ingress gateway');
    // a long poll answers as soon as the policy changes
    const pa = (mode: string): string =>
      JSON.stringify({
        apiVersion: 'security.istio.io/v1beta1',
        kind: 'PeerAuthentication',
        metadata: { name: 'default', namespace: 'bookinfo' },
        spec: { mtls: { mode } },
      });
    const want = cfg.inbound.defaultMode === 'STRICT' ? 'PERMISSIVE' : 'STRICT';
    const t0 = Date.now();
    const polling = get(token, ['-H', `If-None-Match: ${etag}`], '/v1/sidecar?wait=30');
    await new Promise((r) => setTimeout(r, 500));
    await ok(c, ['apply', '-f', '-'], pa(want));
    const changed = await polling;
    assert.equal(changed.status, 200);
    assert.equal((JSON.parse(changed.body) as { inbound: { defaultMode: string } }).inbound.defaultMode, want);
    console.log(`# mesh configuration long poll: ${want} seen ${Date.now() - t0} ms after the poll started`);
    // the sidecar process itself (no redirect here: listeners on loopback)
    const [inP, outP, adminP] = [await freeTcpPort(), await freeTcpPort(), await freeTcpPort()];
    const sidecar = spawn(
      process.execPath,
      [
        join(root, 'dist', 'agents', 'sidecar', 'main.js'),
        '--bind',
        '127.0.0.1',
        '--inbound-port',
        String(inP),
        '--outbound-port',
        String(outP),
        '--admin',
        `127.0.0.1:${adminP}`,
        '--app',
        '127.0.0.1:1',
        '--outbound-destination',
        '127.0.0.1:1',
        '--control',
        base,
        '--control-token',
        tokenFile,
        '--control-ca',
        rootFile,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let sidecarLog = '';
    sidecar.stderr?.setEncoding('utf8').on('data', (d: string) => {
      sidecarLog += d;
    });
    sidecar.stdout?.setEncoding('utf8').on('data', (d: string) => {
      sidecarLog += d;
    });
    try {
      const mode = async (): Promise<string | undefined> => {
        const r = await run('curl', ['-sS', `http://127.0.0.1:${adminP}/config`]);
        return r.status === 0 ? (JSON.parse(r.stdout) as { inbound: { defaultMode: string } }).inbound.defaultMode : undefined;
      };
      await waitFor(async () => ((await mode()) === want ? true : undefined), 20_000, `the sidecar runs the service's configuration (${want})\n${sidecarLog}`);
      const back = want === 'STRICT' ? 'PERMISSIVE' : 'STRICT';
      const t1 = Date.now();
      await ok(c, ['apply', '-f', '-'], pa(back));
      await waitFor(async () => ((await mode()) === back ? true : undefined), 20_000, `the sidecar follows the change to ${back}\n${sidecarLog}`);
      console.log(`# the sidecar process applied ${back} ${Date.now() - t1} ms after the PeerAuthentication changed`);
      const put = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'PUT', '-d', '{}', `http://127.0.0.1:${adminP}/config`]);
      assert.equal(put.stdout, '403', 'the workload cannot reconfigure its proxy');
      // observed traffic: a plaintext client of the pod's inbound port; the proxy reports the
      // flow to /v1/flows and the daemon writes the pod's MeshTrafficObservation
      const t2 = Date.now();
      await run('curl', ['-sS', '-m', '3', '-o', '/dev/null', `http://127.0.0.1:${inP}/`]);
      type Obs = {
        spec: { pod: string; spiffeId: string };
        status?: { inbound?: { defaultMode?: string }; flows?: { client: { address: string }; tls: string; outcome: string; port: number; count: number }[] };
      };
      const obs = await waitFor(
        async () => {
          const o = await kubectlJson<Obs>(c, ['get', 'meshtrafficobservations.mesh.strait.dev', 'meshpod', '-n', 'bookinfo']);
          return o?.status?.flows?.some((f) => f.tls === 'plaintext' && /127\.0\.0\.1$/.test(f.client.address)) ? o : undefined;
        },
        40_000,
        `the MeshTrafficObservation of bookinfo/meshpod with the plaintext flow (written at most every 10 s)\n${sidecarLog}`,
      );
      assert.equal(obs.spec.spiffeId, 'spiffe://cluster.local/ns/bookinfo/sa/web-sa');
      const flow = obs.status?.flows?.find((f) => f.tls === 'plaintext');
      assert.equal(flow?.outcome, back === 'STRICT' ? 'reset' : 'accepted', JSON.stringify(obs.status));
      console.log(`# observed traffic in Kubernetes mode: the flow in the pod's MeshTrafficObservation ${Date.now() - t2} ms after the connection`);
      // only a pod in the mesh reports, for itself: no token 401, a pod outside the mesh 403
      const post = async (tok: string | undefined, body = '{"limit":256,"evicted":0,"flows":[]}', out = '/dev/null'): Promise<string> =>
        (
          await run('curl', [
            '-sS',
            '-o',
            out,
            '-w',
            '%{http_code}',
            '--cacert',
            rootFile,
            '-X',
            'POST',
            '-H',
            'content-type: application/json',
            ...(tok ? ['-H', `Authorization: Bearer ${tok}`] : []),
            '-d',
            body,
            `${base}/v1/flows`,
          ])
        ).stdout;
      assert.equal(await post(undefined), '401');
      assert.equal(await post(outToken), '403');
      // the pod's own reports: at most one a second (429 sooner)
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await post(token), '204');
      assert.equal(await post(token), '429');
      // version skew: a newer proxy's report format is refused as such (400, the code and the
      // pod named), never read as this format (docs/upgrades.md, "Version skew")
      await new Promise((r) => setTimeout(r, 1100));
      const refused = join(tmp, 'flows-refused.json');
      assert.equal(await post(token, '{"version":2,"limit":256,"evicted":0,"flows":[]}', refused), '400');
      assert.match(
        readFileSync(refused, 'utf8'),
        /STRAIT_ERR_VERSION_UNSUPPORTED.*the flow report of pod bookinfo\/meshpod has format version 2.*a newer strait wrote it/,
      );
    } finally {
      sidecar.kill('SIGTERM');
    }
  });

  test('GitOps: unsigned revision -> Sync Error / "Revision is not signed" + ResourceComparison Event; signed -> objects created', {
    timeout: 90_000,
  }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    const app = (name: string, rev: string, ns: string) => ({
      apiVersion: API,
      kind: 'Application',
      metadata: { name, namespace: NS },
      spec: {
        project: 'secure',
        source: { repoURL: repo.dir, path: 'app', targetRevision: rev },
        destination: { server: 'https://kubernetes.default.svc', namespace: ns },
        syncPolicy: { automated: { prune: true, selfHeal: true } },
      },
    });
    await ok(
      c,
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [app('unsigned', commits['unsigned']!, 'ns-unsigned'), app('signed', commits['alice']!, 'ns-signed')],
      }),
    );
    type App = { status?: { sync?: { status?: string }; operationState?: { message?: string } } };
    const status = (name: string, want: string) =>
      waitFor(
        async () => {
          const a = await kubectlJson<App>(c, ['get', 'applications.argoproj.io', name, '-n', NS]);
          return a?.status?.sync?.status === want ? a : undefined;
        },
        45_000,
        `${name}: ${want}\n${daemonLog.slice(-3000)}`,
      );
    const bad = await status('unsigned', 'Sync Error');
    assert.equal(bad.status?.operationState?.message, 'Revision is not signed');
    const events = await waitFor(
      async () => {
        const l = await kubectlJson<{ items: { type: string }[] }>(c, [
          'get',
          'events',
          '-n',
          NS,
          '--field-selector',
          'reason=ResourceComparison,involvedObject.name=unsigned',
        ]);
        return l && l.items.length > 0 ? l.items : undefined;
      },
      15_000,
      'ResourceComparison Event',
    );
    assert.equal(events[0]?.type, 'Warning');
    assert.equal(await kubectlJson(c, ['get', 'configmap', 'demo', '-n', 'ns-unsigned']), undefined, 'nothing applied');
    await status('signed', 'Synced');
    const demo = await kubectlJson<{ data: Record<string, string> }>(c, ['get', 'configmap', 'demo', '-n', 'ns-signed']);
    assert.equal(demo?.data['value'], 'alice');
  });

  test('deploy-broker/join --kubeconfig: broker namespace with its ServiceAccount; overlap refused naming both clusters; the daemon syncs a ServiceExport (Valid=True)', {
    timeout: 120_000,
  }, async (t) => {
    if (!cluster) return t.skip(skip);
    const c = cluster;
    const file = join(tmp, 'broker-info.subm');
    let t0 = Date.now();
    const dep = await strait(['deploy-broker', '--kubeconfig', c.kubeconfigPath, '--cluster', 'cluster-a', '--file', file, '-o', 'json']);
    assert.equal(dep.status, 0, dep.stderr);
    console.log(`# strait deploy-broker --kubeconfig: ${Date.now() - t0} ms`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const info = parseBrokerInfo(readFileSync(file, 'utf8'), file);
    assert.equal(info.brokerURL, c.server);
    assert.equal(info.brokerCA, c.caPem);
    assert.equal(info.ipsecPSK.length, PSK_BYTES);
    assert.equal(info.brokerNamespace, 'submariner-k8s-broker');
    // the token is the broker ServiceAccount's, and it may do only broker work
    const brokerKc = join(tmp, 'broker.kubeconfig');
    writeFileSync(brokerKc, brokerKubeconfig(info.brokerURL, info.brokerCA, info.clientToken), { mode: 0o600 });
    const who = (await ok(c, ['--kubeconfig', brokerKc, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'])).trim();
    assert.equal(who, 'system:serviceaccount:submariner-k8s-broker:strait-broker-client');
    const sa = 'system:serviceaccount:submariner-k8s-broker:strait-broker-client';
    const can: [string, string, string, 'yes' | 'no'][] = [
      ['create', 'clusters.submariner.io', 'submariner-k8s-broker', 'yes'],
      ['create', 'endpointslices.discovery.k8s.io', 'submariner-k8s-broker', 'yes'],
      ['create', 'serviceimports.multicluster.x-k8s.io', 'submariner-k8s-broker', 'yes'],
      ['get', 'secrets/strait-broker-fingerprints', 'submariner-k8s-broker', 'yes'],
      ['list', 'secrets', 'submariner-k8s-broker', 'no'],
      ['get', 'secrets/strait-broker-ca', 'submariner-k8s-broker', 'no'],
      ['create', 'clusters.submariner.io', 'default', 'no'],
      ['list', 'pods', 'submariner-k8s-broker', 'no'],
    ];
    const wrong: string[] = [];
    for (const [verb, res, ns, want] of can) {
      const got = (await c.kubectlAsync(['auth', 'can-i', verb, res, '-n', ns, '--as', sa])).stdout.trim();
      if (got !== want) wrong.push(`${verb} ${res} -n ${ns}: want ${want}, got ${got}`);
    }
    assert.deepEqual(wrong, []);

    t0 = Date.now();
    const j = await strait([
      'join',
      file,
      '--kubeconfig',
      c.kubeconfigPath,
      '--clusterid',
      'cluster-a',
      '--clustercidr',
      '10.1.0.0/16',
      '--servicecidr',
      '100.1.0.0/16',
      '-o',
      'json',
    ]);
    assert.equal(j.status, 0, j.stderr);
    console.log(`# strait join --kubeconfig: ${Date.now() - t0} ms`);
    const clusters = await kubectlJson<{ items: { metadata: { name: string } }[] }>(c, ['get', 'clusters.submariner.io', '-n', 'submariner-k8s-broker']);
    assert.deepEqual(
      clusters?.items.map((x) => x.metadata.name),
      ['cluster-a'],
    );
    const psk = await kubectlJson<{ data: { psk: string } }>(c, ['get', 'secret', 'strait-psk', '-n', NS]);
    assert.equal(Buffer.from(psk?.data.psk ?? '', 'base64').toString('utf8'), info.ipsecPSK.toString('base64'), 'the gateway PSK file text');
    const overlap = await strait([
      'join',
      file,
      '--kubeconfig',
      c.kubeconfigPath,
      '--clusterid',
      'cluster-b',
      '--clustercidr',
      '10.1.128.0/17',
      '--servicecidr',
      '100.2.0.0/16',
    ]);
    assert.notEqual(overlap.status, 0);
    assert.match(overlap.stderr, /STRAIT_ERR_MC_CIDR_OVERLAP/);
    assert.match(overlap.stderr, /cluster-b/);
    assert.match(overlap.stderr, /cluster-a/);
    // a second cluster (its own API server) joins the broker on the first: registered there, its PSK Secret written
    const second = await startTestCluster();
    assert.ok(!('skip' in second), 'second API server');
    try {
      const crds = await second.kubectlAsync(['apply', '-f', join(root, 'deploy', 'crds.yaml')]);
      assert.equal(crds.status, 0, crds.stderr);
      await second.kubectlAsync(['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', '-l', 'app.kubernetes.io/part-of=strait']);
      const jb = await strait([
        'join',
        file,
        '--kubeconfig',
        second.kubeconfigPath,
        '--clusterid',
        'cluster-b',
        '--clustercidr',
        '10.2.0.0/16',
        '--servicecidr',
        '100.2.0.0/16',
      ]);
      assert.equal(jb.status, 0, jb.stderr);
      const both = await kubectlJson<{ items: { metadata: { name: string } }[] }>(c, ['get', 'clusters.submariner.io', '-n', 'submariner-k8s-broker']);
      assert.deepEqual(both?.items.map((x) => x.metadata.name).sort(), ['cluster-a', 'cluster-b']);
      const pskB = await kubectlJson<{ data: { psk: string } }>(second, ['get', 'secret', 'strait-psk', '-n', NS]);
      assert.equal(Buffer.from(pskB?.data.psk ?? '', 'base64').toString('utf8'), info.ipsecPSK.toString('base64'));
      const conn = await kubectlJson<{ data: Record<string, string> }>(second, ['get', 'secret', 'strait-broker-connection', '-n', 'submariner-operator']);
      assert.equal(Buffer.from(conn?.data['brokerURL'] ?? '', 'base64').toString('utf8'), c.server, 'cluster-b reaches the broker on the first API server');
      // a third cluster overlapping cluster-b's pods is refused, naming both
      const o2 = await strait([
        'join',
        file,
        '--kubeconfig',
        second.kubeconfigPath,
        '--clusterid',
        'cluster-c',
        '--clustercidr',
        '10.2.5.0/24',
        '--servicecidr',
        '100.3.0.0/16',
      ]);
      assert.notEqual(o2.status, 0);
      assert.match(o2.stderr, /STRAIT_ERR_MC_CIDR_OVERLAP.*cluster-c.*cluster-b|STRAIT_ERR_MC_CIDR_OVERLAP.*cluster-b.*cluster-c/s);
    } finally {
      await second.stop();
    }
    // --kubeconfig without the CIDRs is a usage error
    const usage = await strait(['join', file, '--kubeconfig', c.kubeconfigPath, '--clusterid', 'cluster-c']);
    assert.equal(usage.status, 2, usage.stderr);

    // the daemon (as strait-control) notices the join and syncs exports through the broker (as strait-broker-client)
    await ok(c, ['create', 'namespace', 'demo']);
    await ok(c, ['create', 'service', 'clusterip', 'nginx', '--tcp=8080:8080', '-n', 'demo']);
    t0 = Date.now();
    await ok(
      c,
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'nginx', namespace: 'demo' } }),
    );
    type Cond = { type: string; status: string; message?: string };
    const valid = await waitFor(
      async () => {
        const se = await kubectlJson<{ status?: { conditions?: Cond[] } }>(c, ['get', 'serviceexports.multicluster.x-k8s.io', 'nginx', '-n', 'demo']);
        const v = se?.status?.conditions?.find((x) => x.type === 'Valid');
        return v?.status === 'True' ? v : undefined;
      },
      60_000,
      `Valid=True\n${daemonLog.slice(-3000)}`,
    );
    console.log(`# ServiceExport Valid=True through the daemon and the Kubernetes broker: ${Date.now() - t0} ms after the export (join polled every 2 s)`);
    assert.match(valid.message ?? '', /synced to the broker/);
    const imports = await waitFor(
      async () => {
        const l = await kubectlJson<{ items: unknown[] }>(c, ['get', 'serviceimports.multicluster.x-k8s.io', '-n', 'submariner-k8s-broker']);
        return l && l.items.length > 0 ? l.items : undefined;
      },
      20_000,
      'ServiceImport on the broker',
    );
    assert.ok(imports.length >= 1);
    // the clusterset IP: the API server allocates the derived Service's ClusterIP, the
    // ServiceImport's spec.ips is that address, and the clusterset.local DNS of Kubernetes mode
    // (once joined) answers it, by dig
    const clusterIp = (await ok(c, ['get', 'service', 'nginx', '-n', 'demo', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
    const vip = await clustersetIP(c, daemonLog);
    assert.notEqual(vip.ip, clusterIp);
    const answer = await waitFor(
      async () => {
        const r = await run('dig', ['+short', '+time=1', '+tries=1', '-p', String(dnsPort), '@127.0.0.1', 'nginx.demo.svc.clusterset.local']);
        return r.stdout.trim() === vip.ip ? r.stdout.trim() : undefined;
      },
      30_000,
      `nginx.demo.svc.clusterset.local from the daemon's DNS\n${daemonLog.slice(-3000)}`,
    );
    assert.equal(answer, vip.ip);
    const byCluster = await run('dig', [
      '+short',
      '+time=1',
      '+tries=1',
      '-p',
      String(dnsPort),
      '@127.0.0.1',
      `${vip.cluster}.nginx.demo.svc.clusterset.local`,
    ]);
    assert.equal(byCluster.stdout.trim(), clusterIp, "a cluster's own name answers its ClusterIP");
    const srv = await run('dig', ['+short', '+time=1', '+tries=1', '-p', String(dnsPort), '@127.0.0.1', 'SRV', 'nginx.demo.svc.clusterset.local']);
    assert.match(srv.stdout, / 8080 nginx\.demo\.svc\.clusterset\.local\.$/m);
  });

  test("a changed join is followed (as the local world's multicluster daemon does): joined again to a broker on another API server, the daemon syncs its export there and keeps answering clusterset.local", {
    timeout: 180_000,
  }, async (t) => {
    if (!cluster || !ready) return t.skip(skip);
    const c = cluster;
    // the export of the join test above, made here too if that test stopped early
    const objs = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'nginx', namespace: 'demo' },
        spec: { ports: [{ name: 'tcp-8080', port: 8080, targetPort: 8080 }] },
      },
      { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'nginx', namespace: 'demo' } },
    ];
    await ok(c, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }));
    const other = await startTestCluster();
    assert.ok(!('skip' in other), 'second API server');
    try {
      const crds = await other.kubectlAsync(['apply', '-f', join(root, 'deploy', 'crds.yaml')]);
      assert.equal(crds.status, 0, crds.stderr);
      await other.kubectlAsync(['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', '-l', 'app.kubernetes.io/part-of=strait']);
      const file = join(tmp, 'broker-info-other.subm');
      const dep = await strait(['deploy-broker', '--kubeconfig', other.kubeconfigPath, '--cluster', 'cluster-z', '--file', file]);
      assert.equal(dep.status, 0, dep.stderr);
      const none = await kubectlJson<{ items: unknown[] }>(other, ['get', 'serviceimports.multicluster.x-k8s.io', '-n', 'submariner-k8s-broker']);
      assert.equal(none?.items.length, 0, 'no import on the new broker before the join');
      const t0 = Date.now();
      const j = await strait([
        'join',
        file,
        '--kubeconfig',
        c.kubeconfigPath,
        '--clusterid',
        'cluster-a',
        '--clustercidr',
        '10.1.0.0/16',
        '--servicecidr',
        '100.1.0.0/16',
      ]);
      assert.equal(j.status, 0, j.stderr);
      // the running daemon (not restarted) moves its export/import sync to the new broker
      const imports = await waitFor(
        async () => {
          const l = await kubectlJson<{ items: { metadata: { name: string } }[] }>(other, [
            'get',
            'serviceimports.multicluster.x-k8s.io',
            '-n',
            'submariner-k8s-broker',
          ]);
          return l && l.items.length > 0 ? l.items : undefined;
        },
        60_000,
        `ServiceImport on the new broker\n${daemonLog.slice(-3000)}`,
      );
      console.log(`# the export synced to the new broker ${Date.now() - t0} ms after the join (join polled every 2 s)`);
      assert.ok(
        imports.some((i) => /nginx/.test(i.metadata.name)),
        JSON.stringify(imports),
      );
      const vip = await clustersetIP(c, daemonLog);
      const answer = await waitFor(
        async () => {
          const r = await run('dig', ['+short', '+time=1', '+tries=1', '-p', String(dnsPort), '@127.0.0.1', 'nginx.demo.svc.clusterset.local']);
          return r.stdout.trim() === vip.ip ? r.stdout.trim() : undefined;
        },
        30_000,
        `nginx.demo.svc.clusterset.local after the new join\n${daemonLog.slice(-3000)}`,
      );
      assert.equal(answer, vip.ip);
    } finally {
      await other.stop();
    }
  });

  test("the web console on the API port in Kubernetes mode: the page, and this cluster's objects through the store API behind the session", {
    timeout: 30_000,
  }, async (t) => {
    if (!cluster || !ready) return t.skip(skip);
    const page = await fetch(`${ready.api}/console/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /id="console-config"/);
    assert.equal((await fetch(`${ready.api}/v1/clusters`)).status, 401);
    const password = readFileSync(join(tmp, 'state', 'initial-admin-password'), 'utf8').trim();
    const login = await fetch(`${ready.api}/api/v1/session`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const clusters = (await (await fetch(`${ready.api}/v1/clusters`, { headers: { cookie } })).json()) as { clusters: string[] };
    assert.ok(clusters.clusters.length >= 1, JSON.stringify(clusters));
    const home = clusters.clusters.find((c) => c !== 'broker')!;
    const ns = await fetch(`${ready.api}/v1/clusters/${home}/list?apiVersion=v1&kind=Namespace`, { headers: { cookie } });
    assert.equal(ns.status, 200);
    assert.ok(((await ns.json()) as { items: { metadata: { name: string } }[] }).items.some((n) => n.metadata.name === 'bookinfo'));
    const secrets = await fetch(`${ready.api}/v1/clusters/${home}/list?apiVersion=v1&kind=Secret`, { headers: { cookie } });
    assert.equal(secrets.status, 403);
  });

  test("promtool check metrics is clean on the daemon's /metrics (Kubernetes mode)", { timeout: 30_000 }, async (t) => {
    if (!cluster || !ready) return t.skip(skip);
    const text = await (await fetch(ready.metrics)).text();
    assert.match(text, /strait_control_webhook_reviews_total\{outcome="injected"\} [1-9]/);
    assert.match(text, /strait_control_mesh_reconciles_total [1-9]/);
    const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    p.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const code = await new Promise<number>((r) => {
      p.on('close', (x) => r(x ?? 1));
      p.stdin.end(text);
    });
    assert.equal(code, 0, out);
    assert.equal(out.trim(), '', out);
  });
});
