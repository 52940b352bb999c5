// The resource commands end to end: serveStores in this process with a temp state dir,
// the real bin/strait.js as a child process (async, so this process keeps serving).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openEmbeddedStore, serveStores, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { stateFiles } from '../../src/platform/cli-kit/index.js';
import { Kinds } from '../../src/platform/resources/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function strait(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

const PODS = `apiVersion: v1
kind: Pod
metadata: {name: client, labels: {app: client}}
spec: {nodeName: cluster-b-worker, containers: [{name: c, image: strait/client}]}
---
apiVersion: v1
kind: Pod
metadata: {name: echo-0, namespace: web, labels: {app: echo}}
spec: {nodeName: cluster-b-gateway, containers: [{name: echo, image: strait/echo}]}
`;

describe('strait apply/get/describe/delete/api-resources', () => {
  let dir: string;
  let stateDir: string;
  const stores = new Map<string, ResourceStore>();
  let server: { close(): Promise<void> };
  const S = () => ['--state-dir', stateDir];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-cli-'));
    stateDir = join(dir, 'state');
    for (const c of ['cluster-a', 'cluster-b']) stores.set(c, openEmbeddedStore({ dir: join(dir, 'stores', c) }));
    const files = stateFiles(stateDir);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(files.storeToken, 'cli-test-token\n', { mode: 0o600 });
    server = await serveStores({ socketPath: files.storeSocket, token: 'cli-test-token', stores });
  });
  after(async () => {
    await server.close();
    for (const s of stores.values()) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('apply -f a multi-document file, then get pods -A -o json lists them with their IPs', async () => {
    const file = join(dir, 'pods.yaml');
    writeFileSync(file, PODS);
    const r = await strait(['apply', '-f', file, '--cluster', 'cluster-b', ...S()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'pod/client created\npod/echo-0 created\n');
    const b = stores.get('cluster-b')!;
    for (const [name, ns, ip] of [
      ['client', 'default', '10.2.1.5'],
      ['echo-0', 'web', '10.2.0.7'],
    ] as const) {
      const p = (await b.get({ apiVersion: 'v1', kind: 'Pod' }, name, ns))!;
      await b.updateStatus({ ...p, status: { phase: 'Running', podIP: ip } });
    }
    const again = await strait(['apply', '-f', file, '--cluster', 'cluster-b', ...S()]);
    assert.equal(again.stdout, 'pod/client unchanged\npod/echo-0 unchanged\n');
    const j = await strait(['get', 'pods', '-A', '--cluster', 'cluster-b', '-o', 'json', ...S()]);
    assert.equal(j.code, 0, j.stderr);
    const list = JSON.parse(j.stdout) as { items: { metadata: { name: string }; status: { podIP: string } }[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.status.podIP]).sort(), [
      ['client', '10.2.1.5'],
      ['echo-0', '10.2.0.7'],
    ]);
    const a = await strait(['get', 'pods', '-A', '-o', 'json', ...S()]);
    assert.deepEqual(JSON.parse(a.stdout).items, [], 'cluster-a is another store');
  });

  test('get pods -o wide shows IP and NODE like kubectl; -A adds NAMESPACE', async () => {
    const r = await strait(['get', 'po', '-A', '-o', 'wide', '--cluster', 'cluster-b', ...S()]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE$/);
    assert.match(lines[1]!, /^default\s+client\s+1\/1\s+Running\s+0\s+\d+s\s+10\.2\.1\.5\s+cluster-b-worker$/);
    assert.match(lines[2]!, /^web\s+echo-0\s+1\/1\s+Running\s+0\s+\d+s\s+10\.2\.0\.7\s+cluster-b-gateway$/);
    const one = await strait(['get', 'pod', 'echo-0', '-n', 'web', '--cluster', 'cluster-b', ...S()]);
    assert.match(one.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n echo-0|^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\necho-0\s+1\/1\s+Running/);
    const y = await strait(['get', 'Pod', 'client', '-o', 'yaml', '--cluster', 'cluster-b', ...S()]);
    assert.match(y.stdout, /^apiVersion: v1\nkind: Pod\n/);
    const sel = await strait(['get', 'pods', '-A', '-l', 'app=echo', '--cluster', 'cluster-b', ...S()]);
    assert.doesNotMatch(sel.stdout, /client/);
    assert.match(sel.stdout, /echo-0/);
  });

  test('apply from standard input, describe shows fields, conditions and Events', async () => {
    const r = await strait(['apply', '-f', '-', ...S()], 'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: echo}\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'serviceexport/echo created\n');
    const a = stores.get('cluster-a')!;
    const se = (await a.get({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport' }, 'echo'))!;
    await a.updateStatus({
      ...se,
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'False',
            reason: 'AwaitingSync',
            message: 'Service was exported and awaits sync',
            lastTransitionTime: '2024-05-01T10:00:00Z',
          },
        ],
      },
    });
    await a.recordEvent({
      involvedObject: { apiVersion: se.apiVersion, kind: se.kind, name: 'echo', namespace: 'default', uid: se.metadata.uid },
      type: 'Normal',
      reason: 'AwaitingSync',
      message: 'awaiting sync to the broker',
      source: 'strait-control',
    });
    const d = await strait(['describe', 'svcex', 'echo', ...S()]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^Name:\s+echo\nNamespace:\s+default\n/);
    assert.match(d.stdout, /Kind:\s+ServiceExport/);
    assert.match(
      d.stdout,
      /Conditions:\n\s+TYPE\s+STATUS\s+REASON\s+LAST TRANSITION\s+MESSAGE\n\s+Valid\s+False\s+AwaitingSync\s+2024-05-01T10:00:00Z\s+Service was exported and awaits sync/,
    );
    assert.match(d.stdout, /Events:\n\s+TYPE\s+REASON\s+AGE\s+FROM\s+MESSAGE\n\s+Normal\s+AwaitingSync\s+\d+s\s+strait-control\s+awaiting sync to the broker/);
    const g = await strait(['get', 'serviceexports', ...S()]);
    assert.match(g.stdout, /^NAME\s+VALID\s+AGE\necho\s+False\s+\d+s\n$/);
  });

  test('a bad manifest names file, document, field and rule, exits 2 and stores nothing', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: first}\n---\napiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {mtls: {mode: STRICTER}}\n',
    );
    const r = await strait(['apply', '-f', file, ...S()]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `error STRAIT_ERR_MANIFEST_INVALID: ${file} document 2: spec.mtls.mode: must be one of UNSET, DISABLE, PERMISSIVE, STRICT (got "STRICTER")\n`,
    );
    assert.equal(await stores.get('cluster-a')!.get({ apiVersion: 'v1', kind: 'Namespace' }, 'first'), undefined);
  });

  test('a store-level failure in the dry run stores nothing either (conflict)', async () => {
    const a = stores.get('cluster-a')!;
    const cm = await a.apply<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: '1' } });
    await a.apply({ ...cm, data: { a: '2' } });
    const file = join(dir, 'conflict.yaml');
    writeFileSync(
      file,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1, resourceVersion: "${cm.metadata.resourceVersion}"}\ndata: {a: "3"}\n`,
    );
    const r = await strait(['apply', '-f', file, ...S()]);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /STRAIT_ERR_CONFLICT/);
    assert.equal(await a.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'fresh'), undefined);
  });

  test('delete by name and by file; a missing object exits 3', async () => {
    const r = await strait(['delete', 'pod', 'client', '--cluster', 'cluster-b', ...S()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'pod "client" deleted\n');
    const again = await strait(['delete', 'pod', 'client', '--cluster', 'cluster-b', ...S()]);
    assert.equal(again.code, 3);
    assert.match(again.stderr, /STRAIT_ERR_NOT_FOUND: Pod "client" not found in namespace "default"/);
    const ignore = await strait(['delete', 'pod', 'client', '--ignore-not-found', '--cluster', 'cluster-b', ...S()]);
    assert.equal(ignore.code, 0);
    const file = join(dir, 'pods.yaml');
    const byFile = await strait(['delete', '-f', file, '--ignore-not-found', '--cluster', 'cluster-b', ...S()]);
    assert.equal(byFile.stdout, 'pod "echo-0" deleted\n');
    const none = await strait(['get', 'pods', '--cluster', 'cluster-b', ...S()]);
    assert.equal(none.stderr, 'No resources found in default namespace.\n');
  });

  test('get -w -o json prints the list, then each change, and ends cleanly on SIGTERM', async () => {
    const { spawn } = await import('node:child_process');
    const a = stores.get('cluster-a')!;
    await a.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched-before' } });
    const child = spawn(process.execPath, [join(root, 'bin', 'strait.js'), 'get', 'ns', '-w', '-o', 'json', ...S()], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let poke = () => undefined as void;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
      poke();
    });
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; got ${out}`)), 15_000);
        poke = () => {
          if (re.test(out)) {
            clearTimeout(t);
            resolve();
          }
        };
        poke();
      });
    await seen(/"ADDED".*watched-before/);
    await a.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched-after' } });
    await seen(/"ADDED".*watched-after/);
    await a.delete({ apiVersion: 'v1', kind: 'Namespace' }, 'watched-after');
    await seen(/"DELETED".*watched-after/);
    const code = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    child.kill('SIGTERM');
    assert.equal(await code, 0);
    const types = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } })
      .filter((e) => e.object.metadata.name.startsWith('watched-'))
      .map((e) => `${e.type} ${e.object.metadata.name}`);
    assert.deepEqual(types, ['ADDED watched-before', 'ADDED watched-after', 'DELETED watched-after']);
  });

  test('api-resources lists every kind', async () => {
    const r = await strait(['api-resources']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\n/);
    assert.match(r.stdout, /\npeerauthentications\s+pa\s+security\.istio\.io\/v1beta1\s+true\s+PeerAuthentication\n/);
    assert.match(r.stdout, /\nnamespaces\s+ns\s+v1\s+false\s+Namespace\n/);
    const j = JSON.parse((await strait(['api-resources', '-o', 'json'])).stdout) as { kind: string }[];
    // every kind strait knows, once each
    assert.deepEqual(
      j.map((r) => r.kind).sort(),
      Object.values(Kinds)
        .map((k) => k.kind)
        .sort(),
    );
  });

  const errors: { name: string; args: () => string[]; code: number; match: RegExp }[] = [
    { name: 'unknown kind', args: () => ['get', 'widgets', ...S()], code: 2, match: /STRAIT_ERR_KIND_UNKNOWN: unknown resource kind "widgets"/ },
    { name: 'missing object', args: () => ['get', 'svc', 'nope', ...S()], code: 3, match: /STRAIT_ERR_NOT_FOUND/ },
    {
      name: 'unknown cluster',
      args: () => ['get', 'pods', '--cluster', 'cluster-z', ...S()],
      code: 3,
      match: /STRAIT_ERR_CLUSTER_UNKNOWN: unknown cluster "cluster-z"; known clusters: cluster-a, cluster-b/,
    },
    {
      name: 'no world running',
      args: () => ['get', 'pods', '--state-dir', join(dir, 'nothing-here')],
      code: 5,
      match: /STRAIT_ERR_WORLD_NOT_RUNNING: no world is running with state dir/,
    },
    { name: 'missing file', args: () => ['apply', '-f', join(dir, 'missing.yaml'), ...S()], code: 2, match: /STRAIT_ERR_FILE_UNREADABLE/ },
    { name: 'bad output format', args: () => ['get', 'pods', '-o', 'xml', ...S()], code: 2, match: /unknown output format "xml"/ },
    { name: 'bad selector', args: () => ['get', 'pods', '-l', 'a in (b', ...S()], code: 2, match: /invalid label selector/ },
  ];
  for (const c of errors) {
    test(`exit ${c.code}: ${c.name}`, async () => {
      const r = await strait(c.args());
      assert.equal(r.code, c.code, r.stderr);
      assert.match(r.stderr, c.match);
    });
  }

  test('--help on every resource command', async () => {
    for (const cmd of ['apply', 'get', 'describe', 'delete', 'api-resources']) {
      const r = await strait([cmd, '--help']);
      assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`Usage: strait ${cmd}`));
    }
  });

  describe('kubectl habits', () => {
    const HABITS = `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: habits, labels: {app: web, tier: front}}
spec: {nodeName: n1, containers: [{name: web, image: strait/echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: habits, labels: {app: web, tier: back}}
spec: {nodeName: n1, containers: [{name: web, image: strait/echo}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: habits}
spec: {clusterIP: 100.1.0.99, selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: habits}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: strait/echo}]}
`;
    const H = () => ['-n', 'habits', ...S()];
    before(async () => {
      const file = join(dir, 'habits.yaml');
      writeFileSync(file, HABITS);
      const r = await strait(['apply', '-f', file, ...S()]);
      assert.equal(r.code, 0, r.stderr);
      const a = stores.get('cluster-a')!;
      for (const [name, ip] of [
        ['web-1', '10.1.0.21'],
        ['web-2', '10.1.0.22'],
      ] as const) {
        const p = (await a.get({ apiVersion: 'v1', kind: 'Pod' }, name, 'habits'))!;
        await a.updateStatus({ ...p, status: { phase: 'Running', podIP: ip } });
      }
    });

    test('get pods,svc prints a table per kind with KIND/NAME names', async () => {
      const r = await strait(['get', 'pods,svc', ...H()]);
      assert.equal(r.code, 0, r.stderr);
      const [pods, svcs] = r.stdout.split('\n\n');
      assert.match(pods ?? '', /^NAME\s+READY\s+STATUS.*\npod\/web-1\s+1\/1\s+Running.*\npod\/web-2\s/s);
      assert.match(svcs ?? '', /^NAME\s+TYPE\s+CLUSTER-IP.*\nservice\/web\s+ClusterIP\s+100\.1\.0\.99\s/s);
    });

    test('get all lists pods, services and deployments', async () => {
      const r = await strait(['get', 'all', '-o', 'name', ...H()]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'pod/web-1\npod/web-2\nservice/web\ndeployment.apps/web\n');
    });

    test('-o name, with -l', async () => {
      const r = await strait(['get', 'pods', '-l', 'tier=front', '-o', 'name', ...H()]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'pod/web-1\n');
    });

    const jsonpaths: { name: string; args: string[]; out: string }[] = [
      { name: 'items[*] names, space-separated', args: ['get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'], out: 'web-1 web-2' },
      { name: 'one field of one object', args: ['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'], out: '100.1.0.99' },
      {
        name: 'range with literals',
        args: ['get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.status.podIP}{"\\n"}{end}'],
        out: 'web-1\t10.1.0.21\nweb-2\t10.1.0.22\n',
      },
      { name: 'a filter', args: ['get', 'pods', '-o', 'jsonpath={.items[?(@.metadata.labels.tier=="back")].metadata.name}'], out: 'web-2' },
      { name: '-o=jsonpath= form, a missing key prints nothing', args: ['get', 'svc', 'web', '-o=jsonpath={.spec.nothing}'], out: '' },
    ];
    for (const c of jsonpaths) {
      test(`-o jsonpath: ${c.name}`, async () => {
        const r = await strait([...c.args, ...H()]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, c.out);
      });
    }

    test('-o jsonpath with a broken template exits 2 and says why', async () => {
      const r = await strait(['get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}', ...H()]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /STRAIT_ERR_USAGE: invalid jsonpath template .*\{range\} without \{end\}/);
    });

    test('apply --dry-run=client needs no world; --dry-run=server checks the store; neither writes', async () => {
      const file = join(dir, 'dry.yaml');
      writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry, namespace: habits}\ndata: {a: "1"}\n');
      const client = await strait(['apply', '-f', file, '--dry-run=client', '--state-dir', join(dir, 'no-world-here')]);
      assert.equal(client.code, 0, client.stderr);
      assert.equal(client.stdout, 'configmap/dry created (dry run)\n');
      const server = await strait(['apply', '-f', file, '--dry-run=server', ...S()]);
      assert.equal(server.code, 0, server.stderr);
      assert.equal(server.stdout, 'configmap/dry created (server dry run)\n');
      assert.equal(await stores.get('cluster-a')!.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'dry', 'habits'), undefined);
      const bad = await strait(['apply', '-f', file, '--dry-run=maybe', ...S()]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--dry-run must be none, client or server, not "maybe"/);
    });

    test('delete -l deletes what matches, nothing else', async () => {
      const r = await strait(['delete', 'pods', '-l', 'tier=back', ...H()]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'pod "web-2" deleted\n');
      const left = await strait(['get', 'pods', '-o', 'name', ...H()]);
      assert.equal(left.stdout, 'pod/web-1\n');
      const none = await strait(['delete', 'pods', '-l', 'tier=nowhere', ...H()]);
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stderr, 'No resources found\n');
    });
  });
});
