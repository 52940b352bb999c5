// Mesh: per namespace and workload the effective inbound mode and why (the policies
// `strait mesh describe` resolves, as the mesh agent reports them), the traffic the
// sidecars saw (client → server, mTLS or plaintext, peer identity), and what a STRICT
// policy would reset. The namespace's PeerAuthentication mode can be changed here.
import { useState } from 'preact/hooks';
import { applyObject, deleteObject } from '../api';
import { kindRef } from '../config';
import type { Live } from '../live';
import { clientText, mesh, policyText, type Flow, type MeshNamespace, type MeshWorkload } from '../model';
import { Action, Badge, Section, Table, ago, type Tone } from './common';

const modeTone = (m: string): Tone => (m === 'STRICT' ? 'ok' : m === 'DISABLE' ? 'bad' : 'warn');

function flowVerdict(f: Flow): { tone: Tone; text: string } {
  if (f.strictWouldReset) return { tone: 'bad', text: 'STRICT would reset this' };
  if (f.outcome === 'reset') return { tone: 'bad', text: `reset by ${f.mode} (${f.reason ?? 'refused'})` };
  return { tone: f.tls === 'mtls' ? 'ok' : 'warn', text: f.tls === 'mtls' ? 'mTLS' : 'accepted' };
}

function ModeForm({ ns, mayAct }: { ns: MeshNamespace; mayAct: boolean }) {
  const current = ns.policies.find((p) => p.name === 'default' && !p.selector)?.mode ?? '';
  // no namespace-wide policy yet: nothing preselected (a preset mode would read as the mode in force)
  const [mode, setMode] = useState(current);
  const id = `mode-${ns.cluster}-${ns.name}`;
  return (
    <form class="inline-form" onSubmit={(e) => e.preventDefault()} aria-label={`PeerAuthentication mode of ${ns.cluster}/${ns.name}`}>
      <label for={id}>Namespace-wide mode</label>
      <select id={id} value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
        {current ? null : <option value="">choose a mode</option>}
        {['STRICT', 'PERMISSIVE', 'DISABLE', 'UNSET'].map((m) => (
          <option value={m}>{m}</option>
        ))}
      </select>
      <Action
        label="Apply"
        disabled={!mayAct || mode === ''}
        describe={`Apply mode ${mode} to namespace ${ns.name} of ${ns.cluster}`}
        run={() => applyObject(ns.cluster, { ...kindRef('PeerAuthentication'), metadata: { name: 'default', namespace: ns.name }, spec: { mtls: { mode } } })}
      />
      {current ? (
        <Action
          label="Remove"
          disabled={!mayAct}
          describe={`Remove PeerAuthentication default of ${ns.cluster}/${ns.name}`}
          run={() => deleteObject(ns.cluster, kindRef('PeerAuthentication'), 'default', ns.name)}
        />
      ) : null}
    </form>
  );
}

function Why({ w }: { w: MeshWorkload }) {
  if (w.sidecar === 'no') return <span>no sidecar: nothing is enforced; every client reaches it in plaintext</span>;
  if (!w.inbound) return <span>sidecar injected; the mesh agent has not reported its resolution yet</span>;
  const last = w.inbound.sources[w.inbound.sources.length - 1];
  return (
    <span>
      {last ? `decided by ${policyText(last)}` : 'nothing applies: PERMISSIVE'}
      {w.inbound.sources.length > 1 ? <span class="muted"> (policies outermost first: {w.inbound.sources.map(policyText).join(' → ')})</span> : null}
      {w.inbound.ports
        .filter((p) => p.mode !== w.inbound?.mode)
        .map((p) => (
          <div>
            port {p.port}: <Badge tone={modeTone(p.mode)}>{p.mode}</Badge>
          </div>
        ))}
    </span>
  );
}

export function MeshView({ live, clusters, mayAct }: { live: Live; clusters: string[]; mayAct: boolean }) {
  const m = mesh(live, clusters);
  const flows = m.namespaces.flatMap((ns) => ns.workloads.flatMap((w) => w.flows.map((f) => ({ w, f }))));
  const wouldBreak = flows.filter((x) => x.f.strictWouldReset);
  return (
    <>
      {!m.flowsReported && m.injected > 0 ? (
        <p class="notice" role="note" data-testid="flows-pending">
          <Badge tone="warn">no observed traffic</Badge> {m.injected} injected pods, and no MeshTrafficObservation from their sidecars
          {m.flowsError ? ` (${m.flowsError})` : ''}: this installation's mesh agent does not report traffic (or not yet), so what STRICT would break is
          unknown. The policies below are current.
        </p>
      ) : null}
      <Section title="What would STRICT break here" id="strict">
        <Table
          caption="Plaintext clients accepted now that a STRICT policy would reset"
          testId="strict-would-break"
          head={['Server', 'Port', 'Client', 'Seen as', 'Mode now', 'Connections', 'Last seen']}
          empty={m.flowsReported ? 'Nothing: every client seen is mTLS or already refused.' : 'Unknown until the sidecars report traffic.'}
          rows={wouldBreak.map(({ w, f }) => [
            `${w.cluster}/${w.namespace}/${w.deployment ?? w.pod}`,
            f.port,
            clientText(f),
            f.tls,
            f.mode,
            f.count,
            ago(f.lastSeen),
          ])}
        />
      </Section>
      {m.namespaces.map((ns) => (
        <Section title={`${ns.cluster} / ${ns.name}`} id={`ns-${ns.cluster}-${ns.name}`} actions={<ModeForm ns={ns} mayAct={mayAct} />}>
          <p class="policies">
            PeerAuthentications:{' '}
            {ns.policies.length === 0
              ? 'none in this namespace'
              : ns.policies.map((p) => <Badge tone={modeTone(p.mode)}>{`${p.name}${p.selector ? ' (workload)' : ''}: ${p.mode}`}</Badge>)}
          </p>
          <Table
            caption={`Workloads of ${ns.cluster}/${ns.name}: effective inbound mode and why`}
            testId={`workloads-${ns.cluster}-${ns.name}`}
            head={['Workload', 'Sidecar', 'Inbound mode', 'Why', 'Identity']}
            empty="No pods."
            rows={ns.workloads.map((w) => [
              w.deployment ? `${w.pod} (Deployment ${w.deployment})` : w.pod,
              <Badge tone={w.sidecar === 'yes' ? 'ok' : w.sidecar === 'pending' ? 'info' : 'warn'}>{w.sidecar === 'pending' ? 'injected' : w.sidecar}</Badge>,
              w.inbound ? <Badge tone={modeTone(w.inbound.mode)}>{w.inbound.mode}</Badge> : w.sidecar === 'no' ? <Badge tone="warn">none</Badge> : '–',
              <Why w={w} />,
              <span class="mono">{w.identity ?? '–'}</span>,
            ])}
          />
          {ns.workloads.some((w) => w.flows.length > 0) ? (
            <Table
              caption={`Traffic the sidecars of ${ns.cluster}/${ns.name} saw`}
              testId={`flows-${ns.cluster}-${ns.name}`}
              head={['Client → server', 'Port', 'TLS', 'Peer identity', 'Outcome', 'Connections', 'Last seen']}
              empty=""
              rows={ns.workloads.flatMap((w) =>
                w.flows.map((f) => {
                  const v = flowVerdict(f);
                  return [
                    `${clientText(f)} → ${w.deployment ?? w.pod}`,
                    f.port,
                    f.tls,
                    <span class="mono">{f.client.identity ?? '(none: not mTLS)'}</span>,
                    <Badge tone={v.tone}>{v.text}</Badge>,
                    f.count,
                    ago(f.lastSeen),
                  ];
                }),
              )}
            />
          ) : null}
        </Section>
      ))}
    </>
  );
}
