// Services: ServiceExports and ServiceImports across clusters with their conditions, the
// clusterset DNS names each answers, the clusters that back each one; export and unexport.
import { useState } from 'preact/hooks';
import { applyObject, deleteObject } from '../api';
import { kindRef } from '../config';
import type { Live } from '../live';
import { clustersOf, services, type Condition } from '../model';
import { Action, Badge, Section, Table, type Tone } from './common';

function conditionTone(c: Condition): Tone {
  // conditions that name a trouble (Conflict, Argo CD's ComparisonError, SyncError, …) are bad when True;
  // the others (Valid, Ready) are good when True, and waiting or refused when False
  if (/Conflict|Error|Warning|Degraded/.test(c.type)) return c.status === 'True' ? 'bad' : 'ok';
  if (c.status === 'True') return 'ok';
  return c.reason === 'AwaitingSync' || c.reason === 'Pending' ? 'warn' : 'bad';
}

export function Conditions({ list }: { list: Condition[] }) {
  if (list.length === 0) return <Badge tone="warn">no conditions yet</Badge>;
  return (
    <span class="conds">
      {list.map((c) => (
        <Badge tone={conditionTone(c)} title={c.message}>{`${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`}</Badge>
      ))}
    </span>
  );
}

function ExportForm({ clusters, exportable, mayAct }: { clusters: string[]; exportable: Map<string, string[]>; mayAct: boolean }) {
  const [cluster, setCluster] = useState(clusters[0] ?? '');
  const options = exportable.get(cluster) ?? [];
  const [svc, setSvc] = useState('');
  const chosen = options.includes(svc) ? svc : (options[0] ?? '');
  const [ns, name] = chosen.split('/');
  return (
    <form class="inline-form" aria-label="Export a service" onSubmit={(e) => e.preventDefault()}>
      <label for="export-cluster">Cluster</label>
      <select id="export-cluster" value={cluster} onChange={(e) => setCluster((e.target as HTMLSelectElement).value)}>
        {clusters.map((c) => (
          <option value={c}>{c}</option>
        ))}
      </select>
      <label for="export-service">Service</label>
      <select id="export-service" value={chosen} onChange={(e) => setSvc((e.target as HTMLSelectElement).value)} disabled={options.length === 0}>
        {options.length === 0 ? <option value="">(every service is exported)</option> : options.map((o) => <option value={o}>{o}</option>)}
      </select>
      <Action
        label="Export"
        disabled={!mayAct || !chosen}
        describe={`Export ${chosen} from ${cluster}`}
        run={() => applyObject(cluster, { ...kindRef('ServiceExport'), metadata: { name: name ?? '', namespace: ns ?? 'default' } })}
      />
    </form>
  );
}

export function ServicesView({ live, clusters, mayAct }: { live: Live; clusters: string[]; mayAct: boolean }) {
  const s = services(live, clusters);
  const cs = clustersOf(clusters);
  return (
    <>
      <Section title="Export a service" id="export">
        <ExportForm clusters={cs} exportable={s.exportable} mayAct={mayAct} />
      </Section>
      <Section title="Services of the cluster set" id="clusterset">
        <Table
          caption="Each exported service: where it is exported from (with its conditions), where it is imported, the clusters that back it and its DNS names"
          testId="clusterset-services"
          head={['Service', 'Exported from', 'Imported in', 'Backing clusters', 'clusterset DNS names']}
          empty="No service is exported."
          rows={s.services.map((r) => [
            `${r.namespace}/${r.name}`,
            r.exports.length === 0 ? (
              <Badge tone="warn">not exported (stale import)</Badge>
            ) : (
              <ul class="plain">
                {r.exports.map((e) => (
                  <li>
                    <strong>{e.cluster}</strong> <Conditions list={e.conditions} />{' '}
                    <Action
                      label="Unexport"
                      disabled={!mayAct}
                      describe={`Unexport ${r.namespace}/${r.name} from ${e.cluster}`}
                      run={() => deleteObject(e.cluster, kindRef('ServiceExport'), r.name, r.namespace)}
                    />
                  </li>
                ))}
              </ul>
            ),
            r.importedIn.join(', ') || '–',
            r.backing.join(', ') || '–',
            <ul class="plain mono">
              {r.dnsNames.map((d) => (
                <li>{d}</li>
              ))}
            </ul>,
          ])}
        />
      </Section>
      {cs.map((c) => (
        <Section title={`Services imported in ${c}`} id={`imports-${c}`}>
          <Table
            caption={`ServiceImports of ${c}`}
            testId={`imports-${c}`}
            head={['Service', 'Type', 'Ports', 'Backing clusters', 'DNS names']}
            empty={`${c} imports no service.`}
            rows={(s.imports.get(c) ?? []).map((i) => [
              `${i.namespace}/${i.name}`,
              i.type,
              i.ports || '–',
              i.backing.join(', ') || '–',
              <ul class="plain mono">
                {i.dnsNames.map((d) => (
                  <li>{d}</li>
                ))}
              </ul>,
            ])}
          />
        </Section>
      ))}
    </>
  );
}
