// The mesh of the control module in Kubernetes mode, from the environment deploy/control.yaml
// sets: the mesh configuration service, the mesh ingress routes, the sidecar-injection webhook.
import { readFileSync } from 'node:fs';
import { E } from '../../../base/errors/index.js';
import type { IngressRouteSpec } from '../controller/index.js';
import type { MeshKubernetesOptions } from './kubernetes.js';

/**
 * The mesh configuration service from the environment deploy/control.yaml sets:
 * STRAIT_MESH_CONFIG_PORT (default 15012; "off": none), STRAIT_MESH_CONFIG_LISTEN (default
 * 0.0.0.0), STRAIT_MESH_CONFIG_URL (what the injected proxies are given; default
 * https://<STRAIT_WEBHOOK_SERVICE>.<namespace>.svc:<port>, the Service's port 15012).
 */
export function meshConfigSettingsFromEnv(env: NodeJS.ProcessEnv, namespace: string): MeshKubernetesOptions['meshConfig'] {
  const port = env['STRAIT_MESH_CONFIG_PORT'] ?? '15012';
  if (port === 'off') return undefined;
  const n = Number(port);
  if (!/^[0-9]{1,5}$/.test(port) || n > 65535) throw E.configInvalid('STRAIT_MESH_CONFIG_PORT', port, 'a port number 0-65535, or "off"');
  const url = env['STRAIT_MESH_CONFIG_URL'] ?? `https://${env['STRAIT_WEBHOOK_SERVICE'] ?? 'strait-control'}.${namespace}.svc:${n === 0 ? 15012 : n}`;
  if (!/^https:\/\/[^/]+$/.test(url)) throw E.configInvalid('STRAIT_MESH_CONFIG_URL', url, 'https://HOST:PORT');
  return { host: env['STRAIT_MESH_CONFIG_LISTEN'] ?? '0.0.0.0', port: n, url };
}

/**
 * The mesh ingress gateway from the environment: STRAIT_MESH_INGRESS, a JSON list of routes
 * [{pathPrefix, namespace, service, port}] (default none: the gateway answers 404), and
 * STRAIT_MESH_INGRESS_SERVICE_ACCOUNT (default strait-mesh-ingress, deploy/mesh-ingress.yaml's).
 */
export function ingressSettingsFromEnv(env: NodeJS.ProcessEnv): MeshKubernetesOptions['ingress'] {
  const text = env['STRAIT_MESH_INGRESS'] ?? '[]';
  const bad = (why: string): never => {
    throw E.configInvalid('STRAIT_MESH_INGRESS', text, why);
  };
  let routes: unknown;
  try {
    routes = JSON.parse(text);
  } catch {
    return bad('a JSON list of routes [{"pathPrefix":"/","namespace":"NS","service":"NAME","port":8080}]');
  }
  if (!Array.isArray(routes)) return bad('a JSON list of routes');
  for (const r of routes as Record<string, unknown>[]) {
    if (typeof r !== 'object' || r === null) return bad('every route is an object');
    if (typeof r['pathPrefix'] !== 'string' || !r['pathPrefix'].startsWith('/')) bad('every route has a pathPrefix starting with "/"');
    for (const k of ['namespace', 'service'])
      if (typeof r[k] !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(r[k] as string)) bad(`every route has a ${k} (a DNS label)`);
    if (!Number.isInteger(r['port']) || (r['port'] as number) < 1 || (r['port'] as number) > 65535) bad('every route has a port 1-65535');
    for (const k of Object.keys(r)) if (!['pathPrefix', 'namespace', 'service', 'port', 'host'].includes(k)) bad(`unknown key ${JSON.stringify(k)} in a route`);
  }
  return { serviceAccount: env['STRAIT_MESH_INGRESS_SERVICE_ACCOUNT'] ?? 'strait-mesh-ingress', routes: routes as IngressRouteSpec[] };
}

/** STRAIT_WEBHOOK_RECHECK_SECONDS: how often a written caBundle is checked again (default 30). */
export function webhookRecheckMsFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env['STRAIT_WEBHOOK_RECHECK_SECONDS'] ?? '30';
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1) throw E.configInvalid('STRAIT_WEBHOOK_RECHECK_SECONDS', text, 'whole seconds, 1 or more');
  return Number(text) * 1000;
}

/** The Kubernetes-mode settings from the environment deploy/control.yaml sets. */
export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv): MeshKubernetesOptions['webhook'] {
  const listen = env['STRAIT_WEBHOOK_LISTEN'] ?? '0.0.0.0';
  return {
    host: listen,
    port: Number(env['STRAIT_WEBHOOK_PORT'] ?? 9443),
    // "off": this process writes no caBundle (injection configured another way, e.g. cert-manager's CA injector)
    configName: env['STRAIT_WEBHOOK_CONFIG'] === 'off' ? undefined : (env['STRAIT_WEBHOOK_CONFIG'] ?? 'strait-sidecar-injector'),
    service: env['STRAIT_WEBHOOK_SERVICE'] ?? 'strait-control',
    extraHosts: (env['STRAIT_WEBHOOK_HOSTS'] ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    image: env['STRAIT_SIDECAR_IMAGE'] ?? imageOfThisPod(),
    ...(env['STRAIT_SIDECAR_IMAGE'] === undefined && env['STRAIT_POD_NAME'] ? { imageFromPod: env['STRAIT_POD_NAME'] } : {}),
  };
}

/** The image the control module runs from (the sidecar uses the same one): strait:<version>. */
function imageOfThisPod(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return `strait:${pkg.version ?? 'latest'}`;
  } catch {
    return 'strait:latest';
  }
}
