// Outbound TLS per destination, as Istio picks the DestinationRule for a client proxy
// (pilot/pkg/model/push_context.go destinationRule) and then the TLS settings
// (pilot/pkg/networking/core/cluster_traffic_policy.go, auto mTLS):
//   1. rules in the client's namespace, 2. rules in the service's namespace, 3. rules in
//   the root namespace; in each, the most specific host match wins (exact over wildcard,
//   longer wildcard over shorter), the oldest among equals; exportTo "." keeps a rule to
//   its own namespace.
//   TLS: port-level tls of the chosen rule, else its trafficPolicy.tls; without a mode,
//   auto mTLS on → ISTIO_MUTUAL exactly when the destination endpoint has a sidecar and its
//   inbound mode for that port is not DISABLE; else plaintext.
import { hostMatches, resolveShortname, specificity } from './host.js';
import type { DestinationRule, EffectiveMode, PolicySource, TlsMode, TlsSettings } from './types.js';

export interface DestinationRef {
  /** FQDN of the service, e.g. echo.mesh.svc.cluster.local */
  host: string;
  namespace: string;
  port: number;
}

export interface EndpointFacts {
  /** does the endpoint run a sidecar? */
  sidecar: boolean;
  /** the endpoint's effective inbound mode on the target port (auto mTLS honours DISABLE) */
  inboundMode?: EffectiveMode;
}

export interface OutboundResolution {
  /** what goes on the wire: ISTIO_MUTUAL = mesh mTLS; DISABLE = plaintext; SIMPLE/MUTUAL = user TLS (not originated by strait) */
  mode: TlsMode;
  /** why: "destination-rule", "auto-mtls", "auto-mtls: no sidecar", "no rule" */
  reason: string;
  rule?: PolicySource;
  tls?: TlsSettings;
}

const byAge = (a: DestinationRule, b: DestinationRule): number => {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  return `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}` ? -1 : 1;
};

function visibleFrom(rule: DestinationRule, clientNs: string): boolean {
  const exportTo = rule.spec?.exportTo;
  if (!exportTo || exportTo.length === 0) return true;
  return exportTo.includes('*') || exportTo.includes(clientNs) || (exportTo.includes('.') && rule.metadata.namespace === clientNs);
}

function bestIn(rules: readonly DestinationRule[], ns: string, dest: DestinationRef, clientNs: string, domain?: string): DestinationRule | undefined {
  let best: DestinationRule | undefined;
  let bestScore = -1;
  for (const r of rules.filter((x) => x.metadata.namespace === ns).sort(byAge)) {
    if (!visibleFrom(r, clientNs)) continue;
    const h = resolveShortname(r.spec?.host ?? '', ns, domain);
    if (h === '' || !hostMatches(h, dest.host)) continue;
    const score = specificity(h);
    if (score > bestScore) {
      best = r;
      bestScore = score;
    }
  }
  return best;
}

/** The DestinationRule that applies to traffic from a client in `clientNs` to `dest`, and where it was found. */
export function selectDestinationRule(
  rules: readonly DestinationRule[],
  clientNs: string,
  dest: DestinationRef,
  rootNamespace: string,
  domain?: string,
): { rule: DestinationRule; scope: 'client-namespace' | 'service-namespace' | 'root-namespace' } | undefined {
  if (clientNs !== rootNamespace) {
    const r = bestIn(rules, clientNs, dest, clientNs, domain);
    if (r) return { rule: r, scope: 'client-namespace' };
  }
  if (dest.namespace !== clientNs && dest.namespace !== rootNamespace) {
    const r = bestIn(rules, dest.namespace, dest, clientNs, domain);
    if (r) return { rule: r, scope: 'service-namespace' };
  }
  const r = bestIn(rules, rootNamespace, dest, clientNs, domain);
  return r ? { rule: r, scope: 'root-namespace' } : undefined;
}

export function tlsFor(rule: DestinationRule, port: number): TlsSettings | undefined {
  const tp = rule.spec?.trafficPolicy;
  const pl = tp?.portLevelSettings?.find((s) => s.port?.number === port);
  if (pl?.tls?.mode) return pl.tls;
  return tp?.tls?.mode ? tp.tls : undefined;
}

export function resolveOutbound(
  rules: readonly DestinationRule[],
  clientNs: string,
  dest: DestinationRef,
  endpoint: EndpointFacts,
  opts: { rootNamespace: string; autoMtls: boolean; domain?: string },
): OutboundResolution {
  const found = selectDestinationRule(rules, clientNs, dest, opts.rootNamespace, opts.domain);
  const rule: PolicySource | undefined = found
    ? {
        kind: 'DestinationRule',
        namespace: found.rule.metadata.namespace ?? '',
        name: found.rule.metadata.name,
        scope: found.scope,
        ...(found.rule.metadata.annotations?.['strait.dev/generated-from'] !== undefined ? { generated: true } : {}),
      }
    : undefined;
  const tls = found ? tlsFor(found.rule, dest.port) : undefined;
  if (tls?.mode) return { mode: tls.mode, reason: 'destination-rule', tls, ...(rule ? { rule } : {}) };
  if (opts.autoMtls) {
    if (!endpoint.sidecar) return { mode: 'DISABLE', reason: 'auto-mtls: destination has no sidecar', ...(rule ? { rule } : {}) };
    if (endpoint.inboundMode === 'DISABLE') return { mode: 'DISABLE', reason: 'auto-mtls: destination inbound mode is DISABLE', ...(rule ? { rule } : {}) };
    return { mode: 'ISTIO_MUTUAL', reason: 'auto-mtls: destination has a sidecar', ...(rule ? { rule } : {}) };
  }
  return { mode: 'DISABLE', reason: rule ? 'destination rule without tls, auto mTLS off' : 'no destination rule, auto mTLS off', ...(rule ? { rule } : {}) };
}
