// Configurations that will break traffic, found before traffic finds them (strait mesh check).
import { INJECT_KEY } from '../../../platform/resources/index.js';
import { inboundOf, outboundTo } from './describe.js';
import { endpointsOf, type MeshView } from './mesh-view.js';
import { selectorOf } from './peer-authentication.js';

export type Severity = 'error' | 'warning';

export interface Finding {
  severity: Severity;
  /** stable name of the rule, e.g. STRICT_OUT_OF_MESH_CLIENT */
  rule: string;
  message: string;
  /** "Kind ns/name" of the objects involved */
  objects: string[];
}

export function checkMesh(view: MeshView): Finding[] {
  const out: Finding[] = [];
  checkServices(view, out);
  checkPeerAuthentications(view, out);
  checkInjection(view, out);
  return out;
}

/** Each service port: STRICT with clients outside the mesh, plaintext in-mesh clients, ISTIO_MUTUAL that nothing terminates. */
function checkServices(view: MeshView, out: Finding[]): void {
  for (const s of view.services) {
    const eps = endpointsOf(view, s);
    for (const p of s.ports) {
      const strictEps = eps.filter(
        (e) => e.sidecar && (inboundOf(view, e).ports.find((x) => x.port === p.targetPort)?.mode ?? inboundOf(view, e).mode) === 'STRICT',
      );
      if (strictEps.length > 0) {
        const outsiders = view.workloads.filter((w) => !w.sidecar && !eps.includes(w));
        if (outsiders.length > 0) {
          out.push({
            severity: 'warning',
            rule: 'STRICT_OUT_OF_MESH_CLIENT',
            message: `service ${s.namespace}/${s.name}:${p.port} is STRICT; clients without a sidecar (${outsiders.map((w) => `${w.namespace}/${w.name}`).join(', ')}) will get "connection reset by peer" (curl exit 56)`,
            objects: [`Service ${s.namespace}/${s.name}`, ...outsiders.map((w) => `Pod ${w.namespace}/${w.name}`)],
          });
        }
      }
      const byRule = new Map<string, { clients: string[]; rules: Set<string>; reason: string }>();
      const note = (rule: string, client: string, ruleRef: string[], reason: string): void => {
        const e = byRule.get(rule) ?? { clients: [], rules: new Set<string>(), reason };
        e.clients.push(client);
        for (const r of ruleRef) e.rules.add(r);
        byRule.set(rule, e);
      };
      for (const w of view.workloads) {
        if (!w.sidecar || eps.includes(w)) continue;
        const row = outboundTo(view, w, s, p);
        const ruleRef = row.rule ? [`DestinationRule ${row.rule.namespace}/${row.rule.name}`] : [];
        const who = `${w.namespace}/${w.name}`;
        if (strictEps.length > 0 && row.mode === 'DISABLE') note('STRICT_PLAINTEXT_CLIENT', who, ruleRef, row.reason);
        if (row.mode === 'ISTIO_MUTUAL' && eps.some((e) => !e.sidecar)) note('ISTIO_MUTUAL_WITHOUT_SIDECAR', who, ruleRef, row.reason);
        if (row.mode === 'ISTIO_MUTUAL' && row.endpoints.some((e) => e.inboundMode === 'DISABLE')) note('ISTIO_MUTUAL_TO_DISABLE', who, ruleRef, row.reason);
      }
      const target = `${s.namespace}/${s.name}:${p.port}`;
      for (const [rule, e] of byRule) {
        const clients = e.clients.join(', ');
        const message =
          rule === 'STRICT_PLAINTEXT_CLIENT'
            ? `in-mesh client(s) ${clients} send plaintext to STRICT ${target} (${e.reason}); apply a DestinationRule with tls.mode ISTIO_MUTUAL for ${s.host} or turn on auto mTLS`
            : rule === 'ISTIO_MUTUAL_WITHOUT_SIDECAR'
              ? `${clients} originate ISTIO_MUTUAL toward ${target}, but endpoint(s) ${eps
                  .filter((x) => !x.sidecar)
                  .map((x) => x.name)
                  .join(', ')} have no sidecar to terminate it`
              : `${clients} originate ISTIO_MUTUAL toward ${target}, whose inbound mode is DISABLE; the application would receive TLS bytes`;
        out.push({ severity: 'error', rule, message, objects: [`Service ${s.namespace}/${s.name}`, ...e.rules, ...e.clients.map((c) => `Pod ${c}`)] });
      }
    }
  }
}

/** PeerAuthentication rules: shadowed policies, port-level settings without a selector, selectors in the root namespace, policies outside the members. */
function checkPeerAuthentications(view: MeshView, out: Finding[]): void {
  const root = view.settings.rootNamespace;
  const seen = new Set<string>();
  for (const w of view.workloads) {
    if (!w.sidecar) continue;
    for (const sh of inboundOf(view, w).shadowed) {
      const k = `${sh.namespace}/${sh.name}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({
        severity: 'warning',
        rule: 'PEER_AUTHENTICATION_SHADOWED',
        message: `PeerAuthentication ${k} has no effect: an older ${sh.scope}-wide policy in the same scope wins`,
        objects: [`PeerAuthentication ${k}`],
      });
    }
  }
  for (const pa of view.peerAuthentications) {
    const k = `${pa.metadata.namespace}/${pa.metadata.name}`;
    if (pa.spec?.portLevelMtls && Object.keys(pa.spec.portLevelMtls).length > 0 && !selectorOf(pa)) {
      out.push({
        severity: 'warning',
        rule: 'PORT_LEVEL_WITHOUT_SELECTOR',
        message: `PeerAuthentication ${k} has portLevelMtls but no selector; Istio applies port-level settings only to workload policies`,
        objects: [`PeerAuthentication ${k}`],
      });
    }
    if (selectorOf(pa) && pa.metadata.namespace === root) {
      out.push({
        severity: 'warning',
        rule: 'SELECTOR_IN_ROOT_NAMESPACE',
        message: `PeerAuthentication ${k} has a selector in the root namespace ${root}; it is ignored`,
        objects: [`PeerAuthentication ${k}`],
      });
    }
    if (pa.metadata.namespace && pa.metadata.namespace !== root && !view.members.has(pa.metadata.namespace)) {
      out.push({
        severity: 'warning',
        rule: 'POLICY_OUTSIDE_MEMBERS',
        message: `PeerAuthentication ${k} is in namespace ${pa.metadata.namespace}, which is not a mesh member; add it to the ServiceMeshMemberRoll`,
        objects: [`PeerAuthentication ${k}`],
      });
    }
  }
}

/** Pods that ask for a sidecar in a namespace that is not a mesh member. */
function checkInjection(view: MeshView, out: Finding[]): void {
  for (const w of view.workloads) {
    if (!w.sidecar && /not a mesh member/.test(w.injection)) {
      out.push({
        severity: 'warning',
        rule: 'INJECT_OUTSIDE_MEMBERS',
        message: `${w.namespace}/${w.name} asks for ${INJECT_KEY}=true, but namespace ${w.namespace} is not a mesh member; it runs without a sidecar`,
        objects: [`Pod ${w.namespace}/${w.name}`],
      });
    }
  }
}
