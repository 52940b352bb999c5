// strait deployed on the real clusters as a user would (docs/kubernetes.md), shared by every
// real-cluster test file: deploy-broker on A, join on both with kubeconfigs, `kubectl apply`
// of deploy/ rendered per cluster, CoreDNS forwarding clusterset.local to strait (as
// Lighthouse has it), a server pod `echo` on B's worker and a client pod `client` on A's
// worker. Idempotent: on clusters where strait runs already (an earlier file of the same
// bring-up, or STRAIT_K8S_REUSE=1) it keeps the join and the pods and re-applies deploy/.
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applyFile, clusters, devDist, kubeconfig, kubectl, kubectlRun, root, sh, state, strait, until } from './harness.js';

/** cluster i's pod and Service CIDRs (a = 1, b = 2) */
export const CIDR = (i: number): { pods: string; services: string } => ({ pods: `10.${10 * i}.0.0/16`, services: `10.${10 * i + 1}.0.0/16` });

/**
 * deploy/ rendered for cluster L: the cluster-specific values, the locally built image.
 * `from`: another version's deploy/ and image (the upgrade tests' previous version), without
 * its CRDs (a CRD is never rolled back: docs/upgrades.md).
 */
export function renderDeploy(L: 'a' | 'b', i: number, R: 'a' | 'b', j: number, from?: { deployDir: string; image: string }): string {
  let rendered = kubectl('a', 'kustomize', from?.deployDir ?? join(root, 'deploy')).replace(
    /image: strait(:[^\s]*)?$/gm,
    `image: ${from?.image ?? 'localhost/strait:test'}`,
  );
  if (from)
    rendered = parseAllDocuments(rendered)
      .filter((d) => (d.toJS() as { kind?: string } | null)?.kind !== 'CustomResourceDefinition')
      .map((d) => d.toString())
      .join('---\n');
  const subnets = (k: number): string => `[${CIDR(k).pods}, ${CIDR(k).services}]`;
  const text = rendered
    .replace('clusterId: cluster-a', `clusterId: cluster-${L}`)
    .replace('localSubnets: [10.1.0.0/16, 100.1.0.0/16]', `localSubnets: ${subnets(i)}`)
    .replace(
      '- { clusterId: cluster-b, endpoint: 192.0.2.2, port: 4500, subnets: [10.2.0.0/16, 100.2.0.0/16] }',
      `- { clusterId: cluster-${R}, endpoint: 172.30.${j}.2, port: 4500, subnets: ${subnets(j)} }`,
    )
    .replace('remoteSubnets: [10.2.0.0/16, 100.2.0.0/16]', `remoteSubnets: ${subnets(j)}`)
    // the agents' gateway, and in cluster a the second gateway node (HA: its announcement moves them there)
    .replace('gateway: { address: 192.0.2.1, port: 4800 }', `gateway: { address: 172.30.${i}.2, port: 4800${L === 'a' ? ', standby: [172.30.1.3]' : ''} }`);
  assert.notEqual(text, rendered);
  assert.doesNotMatch(text, /192\.0\.2\./, 'every placeholder address replaced');
  if (!devDist || from) return text;
  // development: this host's dist/ over the image's
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, unknown>);
  for (const o of docs) {
    const spec = (o['spec'] as { template?: { spec: { volumes?: unknown[]; containers: { volumeMounts?: unknown[] }[] } } } | undefined)?.template?.spec;
    if (!spec || !['Deployment', 'DaemonSet'].includes(o['kind'] as string)) continue;
    spec.volumes = [...(spec.volumes ?? []), { name: 'dev-dist', hostPath: { path: devDist, type: 'Directory' } }];
    for (const c of spec.containers) c.volumeMounts = [...(c.volumeMounts ?? []), { name: 'dev-dist', mountPath: '/opt/strait/dist', readOnly: true }];
  }
  return docs.map((o) => JSON.stringify(o)).join('\n---\n');
}

/** Add clusterset.local to the cluster's CoreDNS, forwarded to strait's DNS Service (as Lighthouse's operator does). */
function forwardClustersetDns(L: string): void {
  const ip = kubectl(L, '-n', 'strait-system', 'get', 'service', 'strait-dns', '-o', 'jsonpath={.spec.clusterIP}').trim();
  assert.match(ip, /^10\.[0-9.]+$/);
  let corefile = kubectl(L, '-n', 'kube-system', 'get', 'configmap', 'coredns', '-o', 'jsonpath={.data.Corefile}');
  // cache + serve_stale: an answer already given is served again at once while strait's DNS
  // restarts (an upgrade), for 60 s; kept 1 s, and an expired one is served once more while
  // it is refreshed; AAAA answered here (strait's clusterset DNS is IPv4 only: no data), since
  // CoreDNS serves no stale negative answer and a resolver that asks A and AAAA together fails
  // on either's SERVFAIL (docs/kubernetes.md)
  const block =
    'clusterset.local:53 {\n    errors\n    template IN AAAA clusterset.local {\n        rcode NOERROR\n    }\n' +
    `    cache 1 {\n        serve_stale 60s immediate\n    }\n    forward . ${ip}\n}\n`;
  if (corefile.startsWith(block)) return;
  // a reinstall (the upgrade tests uninstall strait) gives the Service another address; an older block
  corefile = corefile.replace(/^clusterset\.local:53 \{\n(?:.*\n)*?\}\n/, '');
  const patch = JSON.stringify({ data: { Corefile: `${block}${corefile}` } });
  kubectl(L, '-n', 'kube-system', 'patch', 'configmap', 'coredns', '--type', 'merge', '-p', patch);
}

/**
 * The githost's PersistentVolumeClaim needs a volume and these clusters have no provisioner:
 * a PersistentVolume made by hand, as docs/kubernetes.md tells an admin (a directory of the
 * host, which every node of these clusters shares, owned by the githost's user). After an
 * uninstall the claim is gone with its namespace and the volume (Retain) is Released with the
 * repositories in it: its claimRef is removed so the next install's claim binds it again.
 */
export function githostVolume(L: 'a' | 'b'): string {
  const name = `strait-githost-${L}`;
  const dir = join(state, 'volumes', L, 'githost');
  mkdirSync(dir, { recursive: true });
  chownSync(dir, 10001, 10001);
  const phase = kubectlRun(L, 'get', 'pv', name, '-o', 'jsonpath={.status.phase}');
  if (phase.status !== 0) {
    const pv = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        hostPath: { path: dir, type: 'Directory' },
      },
    };
    applyFile(L, join(state, 'volumes'), `pv-${L}.json`, JSON.stringify(pv), '--server-side');
  } else if (phase.stdout === 'Released') {
    kubectl(L, 'patch', 'pv', name, '--type', 'json', '-p', '[{"op":"remove","path":"/spec/claimRef"}]');
  }
  return dir;
}

/**
 * strait deployed and Ready on both clusters (no container restarted), the echo and client
 * pods Ready; their IPs. `work`: a directory for the rendered files and broker-info.subm.
 */
export async function deployStrait(work: string): Promise<{ serverIp: string; clientIp: string }> {
  const t0 = Date.now();
  // (both clusters: the upgrade tests uninstall strait, and a half-done run may leave one)
  const already = ['a', 'b'].every((L) => kubectlRun(L, '-n', 'strait-system', 'get', 'daemonset', 'strait-gateway').status === 0);
  if (!already) {
    // the CRDs first: deploy-broker and join write Submariner's kinds (without them join fails
    // with 'Cluster "*" not found in namespace "submariner-k8s-broker"': the list gets a 404)
    for (const L of ['a', 'b']) {
      kubectl(L, 'apply', '--server-side', '-f', join(root, 'deploy', 'crds.yaml'));
      kubectl(L, 'wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s');
    }
    // broker on A, both clusters join with their kubeconfigs
    strait('deploy-broker', '--kubeconfig', kubeconfig('a'), '--file', join(work, 'broker-info.subm'));
    for (const [L, i] of [
      ['a', 1],
      ['b', 2],
    ] as const) {
      strait(
        'join',
        join(work, 'broker-info.subm'),
        '--clusterid',
        `cluster-${L}`,
        '--kubeconfig',
        kubeconfig(L),
        '--clustercidr',
        CIDR(i).pods,
        '--servicecidr',
        CIDR(i).services,
      );
    }
  }
  for (const [L, i, R, j] of [
    ['a', 1, 'b', 2],
    ['b', 2, 'a', 1],
  ] as const)
    writeFileSync(join(work, `deploy-${L}.yaml`), renderDeploy(L, i, R, j));
  for (const L of ['a', 'b'] as const) {
    githostVolume(L);
    const file = join(work, `deploy-${L}.yaml`);
    // a second apply once the CRDs of the first are established
    const r = kubectlRun(L, 'apply', '--server-side', '-f', file);
    if (r.status !== 0) {
      kubectl(L, 'wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s');
      kubectl(L, 'apply', '--server-side', '-f', file);
    }
    if (already && devDist && process.env['STRAIT_K8S_DEV_RESTART'] === '1') {
      for (const w of ['daemonset/strait-gateway', 'daemonset/strait-node-agent', 'deployment/strait-control', 'deployment/strait-githost'])
        kubectl(L, '-n', 'strait-system', 'rollout', 'restart', w);
    }
  }
  for (const L of ['a', 'b']) {
    if (already)
      for (const w of ['daemonset/strait-gateway', 'daemonset/strait-node-agent', 'deployment/strait-control'])
        sh(clusters, ['kubectl', L, '-n', 'strait-system', 'rollout', 'status', w, '--timeout=300s'], 320_000);
    await until(
      `cluster-${L}: strait pods Ready`,
      () => (kubectlRun(L, '-n', 'strait-system', 'wait', '--for=condition=Ready', 'pod', '--all', '--timeout=30s').status === 0 ? true : undefined),
      300_000,
      2000,
    );
    const restarts = kubectl(
      L,
      '-n',
      'strait-system',
      'get',
      'pods',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.status.containerStatuses[*].restartCount} {end}',
    );
    // (a deployment found running may have restarted a container on purpose: an earlier file's fault)
    if (!already) assert.doesNotMatch(restarts, /=[1-9]/, `cluster-${L}: restarts: ${restarts}`);
    forwardClustersetDns(L);
  }
  console.log(`strait deployed and Ready in ${Math.round((Date.now() - t0) / 1000)} s`);
  // the server on B's worker, the client on A's worker (the test image: busybox httpd on
  // 8080 whose /cgi-bin/ip answers the client's address; curl, dig, iperf3)
  if (kubectlRun('b', 'get', 'pod', 'echo').status !== 0) {
    kubectl(
      'b',
      'run',
      'echo',
      '--image=localhost/strait-test:1',
      '--image-pull-policy=Never',
      '--labels=app=echo',
      '--overrides={"spec":{"nodeName":"b-wk"}}',
    );
  }
  if (kubectlRun('a', 'get', 'pod', 'client').status !== 0) {
    kubectl(
      'a',
      'run',
      'client',
      '--image=localhost/strait-test:1',
      '--image-pull-policy=Never',
      '--overrides={"spec":{"nodeName":"a-wk"}}',
      '--command',
      '--',
      'sleep',
      '36000',
    );
  }
  kubectl('b', 'wait', '--for=condition=Ready', 'pod/echo', '--timeout=120s');
  kubectl('a', 'wait', '--for=condition=Ready', 'pod/client', '--timeout=120s');
  return {
    serverIp: kubectl('b', 'get', 'pod', 'echo', '-o', 'jsonpath={.status.podIP}').trim(),
    clientIp: kubectl('a', 'get', 'pod', 'client', '-o', 'jsonpath={.status.podIP}').trim(),
  };
}
