// Rules a schema cannot say, checked after the schema as the upstream validators do
// (Kubernetes apiserver validation, Istio's validation webhook). Each returns the first
// broken rule as { path, rule, value } or undefined.
import { globCompiles } from '../../base/glob/index.js';
import type { KubeObject } from '../store/index.js';

export interface RuleViolation {
  path: string;
  rule: string;
  value?: unknown;
}
type Rule = (o: KubeObject) => RuleViolation | undefined;

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;
const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** the keys of a source integrity policy's `strait` extension (docs/gitops.md, "Signer identity rules") */
const STRAIT_SIGNER_RULES = ['signerIdentities', 'committerEmailMatchesSigner'];

const RULES: Record<string, Rule[]> = {
  AppProject: [
    (o) => {
      const spec = rec(o.spec);
      if (spec['sourceIntegrity'] === undefined || spec['sourceIntegrity'] === null) return undefined;
      const si = rec(spec['sourceIntegrity']);
      const keys = Array.isArray(spec['signatureKeys']) ? (spec['signatureKeys'] as unknown[]) : [];
      if (keys.length > 0) {
        return {
          path: 'spec.sourceIntegrity',
          rule:
            'cannot be used together with spec.signatureKeys (Argo CD 3.5); move the key IDs into a policy ' +
            '(sourceIntegrity.git.policies: [{repos: [{url: "*"}], gpg: {mode: head, keys: [...]}}]) and remove spec.signatureKeys',
        };
      }
      if (si['git'] === undefined && si['helm'] === undefined) return { path: 'spec.sourceIntegrity', rule: 'must specify at least one of git or helm' };
      const policies = Array.isArray(rec(si['git'])['policies']) ? (rec(si['git'])['policies'] as unknown[]) : [];
      for (const [i, p] of policies.entries()) {
        // a glob that does not compile matches nothing: the repositories it meant would sync unverified
        const repos = Array.isArray(rec(p)['repos']) ? (rec(p)['repos'] as unknown[]) : [];
        for (const [j, r] of repos.entries()) {
          const url = rec(r)['url'];
          if (typeof url === 'string' && !globCompiles(url.startsWith('!') ? url.slice(1) : url)) {
            return {
              path: `spec.sourceIntegrity.git.policies[${i}].repos[${j}].url`,
              rule: 'is not a valid glob (an unclosed "[" or "{", or a trailing "\\"); a pattern that does not compile would match no repository',
              value: url,
            };
          }
        }
        // strait's extension is strait's own: a misspelled rule must not pass as no rule
        for (const key of Object.keys(rec(rec(p)['strait']))) {
          if (!STRAIT_SIGNER_RULES.includes(key)) {
            return {
              path: `spec.sourceIntegrity.git.policies[${i}].strait.${key}`,
              rule: `is not a strait signer rule (known: ${STRAIT_SIGNER_RULES.join(', ')})`,
            };
          }
        }
      }
      return undefined;
    },
  ],
  PeerAuthentication: [
    (o) => {
      const spec = rec(o.spec);
      const ports = rec(spec['portLevelMtls']);
      for (const key of Object.keys(ports)) {
        const n = Number(key);
        if (!/^\d+$/.test(key) || n < 1 || n > 65535)
          return { path: `spec.portLevelMtls[${JSON.stringify(key)}]`, rule: 'keys must be port numbers from 1 to 65535', value: key };
      }
      const labels = rec(rec(spec['selector'])['matchLabels']);
      if (Object.keys(ports).length > 0 && Object.keys(labels).length === 0) {
        return {
          path: 'spec.portLevelMtls',
          rule: "portLevelMtls requires selector (spec.selector.matchLabels), as Istio's CRD rule says; a mesh- or namespace-wide policy cannot set ports",
        };
      }
      return undefined;
    },
  ],
  Service: [
    (o) => {
      const spec = rec(o.spec);
      if (spec['type'] === 'ExternalName' && typeof spec['externalName'] !== 'string')
        return { path: 'spec.externalName', rule: 'is required when spec.type is ExternalName' };
      if (spec['clusterIP'] === 'None' && spec['type'] !== undefined && spec['type'] !== 'ClusterIP') {
        return { path: 'spec.clusterIP', rule: 'may be "None" (headless) only when spec.type is ClusterIP', value: spec['clusterIP'] };
      }
      const ips = Array.isArray(spec['clusterIPs']) ? (spec['clusterIPs'] as unknown[]) : [];
      for (const [i, ip] of ips.entries()) {
        if (typeof ip !== 'string' || !(IPV4.test(ip) || ip === 'None'))
          return { path: `spec.clusterIPs[${i}]`, rule: 'must be an IPv4 address or "None"', value: ip };
      }
      const ports = Array.isArray(spec['ports']) ? (spec['ports'] as Record<string, unknown>[]) : [];
      if (ports.length > 1) {
        const seen = new Set<string>();
        for (const [i, p] of ports.entries()) {
          if (typeof p['name'] !== 'string' || p['name'] === '') return { path: `spec.ports[${i}].name`, rule: 'is required when a Service has several ports' };
          if (seen.has(p['name'])) return { path: `spec.ports[${i}].name`, rule: "must be unique among the Service's ports", value: p['name'] };
          seen.add(p['name']);
        }
      }
      return undefined;
    },
  ],
  EndpointSlice: [
    (o) => {
      if (o['addressType'] !== 'IPv4') return undefined;
      const eps = Array.isArray(o['endpoints']) ? (o['endpoints'] as unknown[]) : [];
      for (const [i, e] of eps.entries()) {
        const addrs = Array.isArray(rec(e)['addresses']) ? (rec(e)['addresses'] as unknown[]) : [];
        for (const [j, a] of addrs.entries()) {
          if (typeof a !== 'string' || !IPV4.test(a))
            return { path: `endpoints[${i}].addresses[${j}]`, rule: 'must be an IPv4 address (addressType is IPv4)', value: a };
        }
      }
      return undefined;
    },
  ],
  Endpoint: [
    (o) => {
      const spec = rec(o.spec);
      if (typeof spec['cluster_id'] !== 'string' && typeof spec['clusterId'] !== 'string')
        return { path: 'spec.cluster_id', rule: 'is required (or spec.clusterId)' };
      return undefined;
    },
  ],
  ServiceImport: [
    (o) => {
      const ips = Array.isArray(rec(o.spec)['ips']) ? (rec(o.spec)['ips'] as unknown[]) : [];
      for (const [i, ip] of ips.entries()) {
        if (typeof ip !== 'string' || !IPV4.test(ip)) return { path: `spec.ips[${i}]`, rule: 'must be an IPv4 address', value: ip };
      }
      return undefined;
    },
  ],
  Deployment: [
    (o) => {
      const spec = rec(o.spec);
      const want = rec(rec(spec['selector'])['matchLabels']);
      const have = rec(rec(rec(spec['template'])['metadata'])['labels']);
      for (const [k, v] of Object.entries(want)) {
        if (have[k] !== v) return { path: 'spec.template.metadata.labels', rule: `must match spec.selector (missing ${k}=${String(v)})` };
      }
      return undefined;
    },
  ],
};

export function checkRules(o: KubeObject): RuleViolation | undefined {
  for (const r of RULES[o.kind] ?? []) {
    const v = r(o);
    if (v) return v;
  }
  return undefined;
}

/**
 * What an invalid object of a kind stands for where ignoring it would weaken security:
 * a PeerAuthentication that cannot be read is STRICT for its scope (its selector when
 * that is a string map, else its whole namespace). Used where invalid objects cannot be
 * refused at write time (a Kubernetes list/watch); undefined for kinds that are skipped.
 */
const standInMetadata = (o: KubeObject, reason: string): KubeObject['metadata'] => {
  const md = rec(o.metadata);
  return {
    name: String(md['name']),
    ...(typeof md['namespace'] === 'string' ? { namespace: md['namespace'] } : {}),
    ...(typeof md['uid'] === 'string' ? { uid: md['uid'] } : {}),
    ...(typeof md['resourceVersion'] === 'string' ? { resourceVersion: md['resourceVersion'] } : {}),
    ...(typeof md['creationTimestamp'] === 'string' ? { creationTimestamp: md['creationTimestamp'] } : {}),
    annotations: { 'strait.dev/invalid': reason.slice(0, 1000) },
  };
};

const STAND_INS: Record<string, (o: KubeObject, reason: string) => KubeObject> = {
  // an AppProject that cannot be read permits nothing: its Applications are refused
  // (SourceNotPermitted), never synced under rules weaker than the ones written
  AppProject: (o, reason) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: standInMetadata(o, reason), spec: { sourceRepos: [], destinations: [] } }),
  PeerAuthentication: (o, reason) => {
    const labels = rec(rec(rec(o.spec)['selector'])['matchLabels']);
    const selector = Object.keys(labels).length > 0 && Object.values(labels).every((v) => typeof v === 'string') ? { selector: { matchLabels: labels } } : {};
    return { apiVersion: o.apiVersion, kind: o.kind, metadata: standInMetadata(o, reason), spec: { ...selector, mtls: { mode: 'STRICT' } } };
  },
};

export function failClosedStandIn(o: KubeObject, reason: string): KubeObject | undefined {
  const f = STAND_INS[o.kind];
  return f ? f(o, reason) : undefined;
}
