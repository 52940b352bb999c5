// Runs inside a private namespace tree (unshare --net --mount), started by
// pods-netns.test.ts. Builds three "pods" (network namespaces on a bridge): server (echo
// app + sidecar), client (sidecar), outsider (no sidecar); installs strait's redirect rules
// in the injected pods; runs the sidecars as uid 1337 with configs from the policy
// functions; and for each mode fills the traffic outcomes table (docs/mesh.md) with the real curl, plus the
// ingress gateway from the tree's root namespace. Prints the table as JSON.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildMeshView, findWorkload, ingressConfigFor, MeshCa, sidecarConfigFor } from '../../src/mesh/control/index.js';
import type { KubeObject } from '../../src/platform/store/index.js';
import { IngressGateway, sidecarRedirectRules, type InboundMode } from '../../src/mesh/dataplane/proxy/index.js';
import { curl } from './helpers.js';
import { dr, pa, pod, smcp, smmr, svc } from './fixtures.js';

const ROOT = process.env['STRAIT_ROOT'] ?? process.cwd();
const UID = 1337;
const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const children: ChildProcess[] = [];

const PODS = { server: '10.77.0.2', client: '10.77.0.3', outsider: '10.77.0.4' } as const;

function netns(name: string, ip: string, i: number): void {
  sh('ip', 'netns', 'add', name);
  sh('ip', 'link', 'add', `h${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
  sh('ip', 'link', 'set', `h${i}`, 'master', 'br0', 'up');
  sh('ip', '-n', name, 'link', 'set', 'lo', 'up');
  sh('ip', '-n', name, 'addr', 'add', `${ip}/24`, 'dev', 'eth0');
  sh('ip', '-n', name, 'link', 'set', 'eth0', 'up');
}

function startIn(ns: string, args: string[]): Promise<Record<string, number>> {
  const c = spawn('ip', ['netns', 'exec', ns, process.execPath, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' },
  });
  children.push(c);
  return new Promise((resolve, reject) => {
    createInterface({ input: c.stdout! }).once('line', (l) => resolve(JSON.parse(l)));
    c.once('exit', (code) => reject(new Error(`${args.join(' ')} in ${ns} exited ${code}`)));
  });
}

function curlIn(ns: string | undefined, url: string) {
  // curl from a pod: ip netns exec; the tree's root namespace is the "host"
  return ns ? curlArgs(['netns', 'exec', ns, 'curl'], url) : curl([url]);
}
function curlArgs(prefix: string[], url: string) {
  return new Promise<{ exit: number; code: string; stderr: string }>((resolve) => {
    const c = spawn('ip', [...prefix, '-sS', '--max-time', '5', '-o', '/dev/null', '-w', '%{http_code}', url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => {
      out += d;
    });
    c.stderr.on('data', (d) => {
      err += d;
    });
    c.on('exit', (code) => resolve({ exit: code ?? -1, code: out.trim(), stderr: err.trim() }));
  });
}

async function main(): Promise<void> {
  sh('mount', '-t', 'tmpfs', 'strait-netns', '/run/netns');
  sh('ip', 'link', 'set', 'lo', 'up');
  sh('ip', 'link', 'add', 'br0', 'type', 'bridge');
  sh('ip', 'addr', 'add', '10.77.0.1/24', 'dev', 'br0');
  sh('ip', 'link', 'set', 'br0', 'up');
  Object.entries(PODS).forEach(([name, ip], i) => netns(name, ip, i));
  for (const name of ['server', 'client']) {
    execFileSync('ip', ['netns', 'exec', name, 'nft', '-f', '-'], {
      input: sidecarRedirectRules({ inboundPort: 15006, outboundPort: 15001, proxyUid: UID, excludeInboundPorts: [15000] }),
    });
  }

  const dir = mkdtempSync(join(tmpdir(), 'strait-pods-'));
  chownSync(dir, UID, UID);
  const ca = MeshCa.create();
  const base: KubeObject[] = [
    smcp('istio-system', { mtls: false, automtls: false, cp: false }),
    smmr('istio-system', ['mesh']),
    pod('mesh', 'echo', { labels: { app: 'echo' }, inject: 'annotation', ip: PODS.server, sa: 'echo', port: 8080 }),
    pod('mesh', 'client', { inject: 'annotation', ip: PODS.client, sa: 'client' }),
    pod('mesh', 'outsider', { ip: PODS.outsider }),
    svc('mesh', 'echo', 8080),
  ];
  const certs = { echo: ca.issueSync('mesh', 'echo'), client: ca.issueSync('mesh', 'client') };
  const gwCert = ca.issueSync('istio-system', 'istio-ingressgateway-service-account');
  const write = (name: string, cfg: unknown) => {
    const f = join(dir, `${name}.json`);
    writeFileSync(`${f}.tmp`, JSON.stringify(cfg), { mode: 0o600 });
    chownSync(`${f}.tmp`, UID, UID);
    renameSync(`${f}.tmp`, f);
  };
  const configure = (objs: KubeObject[]) => {
    const view = buildMeshView(objs);
    for (const [name, w] of [
      ['echo', 'echo'],
      ['client', 'client'],
    ] as const) {
      const cert = certs[name];
      write(name, sidecarConfigFor(view, findWorkload(view, 'mesh', w)!, { certPem: cert.certPem, keyPem: cert.keyPem, rootPem: cert.rootPem }));
    }
    return ingressConfigFor(
      view,
      [{ pathPrefix: '/', namespace: 'mesh', service: 'echo', port: 8080, backend: { host: PODS.server, port: 8080 } }],
      { namespace: 'istio-system', serviceAccount: 'istio-ingressgateway-service-account' },
      { certPem: gwCert.certPem, keyPem: gwCert.keyPem, rootPem: gwCert.rootPem },
    );
  };
  const setups: Record<InboundMode, KubeObject[]> = {
    PERMISSIVE: [pa('mesh', 'default', 'PERMISSIVE')],
    DISABLE: [pa('mesh', 'default', 'DISABLE'), dr('mesh', 'default', '*', 'DISABLE')],
    STRICT: [pa('mesh', 'default', 'STRICT'), dr('mesh', 'default', 'echo', 'ISTIO_MUTUAL')],
  };
  let ingressCfg = configure([...base, ...setups.PERMISSIVE]);
  await startIn('server', [join(ROOT, 'dist', 'test', 'mesh', 'echo-app.js'), '8080']);
  const sidecar = (name: string) =>
    startIn(name === 'echo' ? 'server' : name, [
      join(ROOT, 'dist', 'agents', 'sidecar', 'main.js'),
      '--config',
      join(dir, `${name}.json`),
      '--uid',
      String(UID),
    ]);
  await sidecar('echo');
  await sidecar('client');
  const gw = new IngressGateway(ingressCfg);
  const gwPort = (await gw.listen('127.0.0.1', 0)).port;

  const table: Record<string, { inMesh: unknown; outsider: unknown; ingress: unknown }> = {};
  for (const mode of ['PERMISSIVE', 'DISABLE', 'STRICT'] as const) {
    ingressCfg = configure([...base, ...setups[mode]]);
    gw.update(ingressCfg);
    await new Promise((r) => setTimeout(r, 300)); // the sidecars re-read their files (~30 ms measured)
    const url = `http://${PODS.server}:8080/`;
    const [inMesh, outsider, ingress] = [await curlIn('client', url), await curlIn('outsider', url), await curlIn(undefined, `http://127.0.0.1:${gwPort}/`)];
    table[mode] = { inMesh, outsider, ingress };
  }
  await gw.close();
  process.stdout.write(JSON.stringify(table));
}

main()
  .catch((err) => {
    process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }));
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
  });
