// Topology: clusters with their nodes, the gateways (active/passive), the broker, and the
// tunnels between gateways with status, RTT and throughput from the gateways' counters.
// The graph (Cytoscape) is a picture; the tables under it carry the same facts for
// keyboards and screen readers.
import cytoscape from 'cytoscape';
import { useEffect, useRef } from 'preact/hooks';
import type { Live } from '../live';
import { formatBytes, topology, tunnelStatusText, type Topology } from '../model';
import { formatRtt } from '../units';
import { Badge, Section, Table } from './common';

const rateText = (t: Topology['tunnels'][number]): string => (t.rate ? `↑ ${formatBytes(t.rate.txBps)}/s ↓ ${formatBytes(t.rate.rxBps)}/s` : '–');

function elements(topo: Topology): cytoscape.ElementDefinition[] {
  const els: cytoscape.ElementDefinition[] = [];
  const width = 360;
  const x0 = -((topo.clusters.length - 1) * width) / 2;
  if (topo.broker) els.push({ data: { id: 'broker', label: 'broker' }, classes: 'broker', position: { x: 0, y: -170 } });
  topo.clusters.forEach((c, i) => {
    const cx = x0 + i * width;
    els.push({ data: { id: `c:${c.name}`, label: `${c.name}${c.clusterCIDRs.length ? `\n${c.clusterCIDRs.join(' ')}` : ''}` }, classes: 'cluster' });
    c.nodes.forEach((n, j) => {
      const gw = n.gateway;
      const label = gw ? `node ${n.name}\ngateway: ${gw.haStatus}` : `node ${n.name}\n${n.role}${n.ready ? '' : ' (not ready)'}`;
      els.push({
        data: { id: `n:${c.name}/${n.name}`, parent: `c:${c.name}`, label },
        classes: `node ${gw ? `gateway ${gw.haStatus}` : 'worker'}${n.ready ? '' : ' notready'}`,
        position: { x: cx, y: j * 90 },
      });
    });
    if (topo.broker)
      els.push({
        data: { id: `j:${c.name}`, source: 'broker', target: `c:${c.name}`, label: c.joined ? 'joined' : 'not joined' },
        classes: c.joined ? 'join' : 'join missing',
      });
  });
  // one edge per pair of clusters: both ends' records side by side
  const seen = new Set<string>();
  for (const t of topo.tunnels) {
    const pair = [t.cluster, t.peer].sort().join('|');
    if (seen.has(pair)) continue;
    seen.add(pair);
    const back = topo.tunnels.find((x) => x.cluster === t.peer && x.peer === t.cluster);
    const peerGw = back?.gateway ?? topo.clusters.find((c) => c.name === t.peer)?.gateways.find((g) => g.haStatus === 'active')?.node;
    const target = peerGw ? `n:${t.peer}/${peerGw}` : `c:${t.peer}`;
    const up = t.status === 'connected' && (!back || back.status === 'connected');
    const label = `${up ? 'connected' : `${t.status}${back && back.status !== t.status ? ` / ${back.status}` : ''}`}${t.rttAvg ? ` · ${formatRtt(t.rttAvg)}` : ''}${up || t.rate ? `\n${rateText(t)}` : ''}`;
    els.push({ data: { id: `t:${pair}`, source: `n:${t.cluster}/${t.gateway}`, target, label }, classes: up ? 'tunnel up' : 'tunnel down' });
  }
  return els;
}

const STYLE: cytoscape.StylesheetJson = [
  {
    selector: 'node',
    style: {
      label: 'data(label)',
      'text-wrap': 'wrap',
      'font-size': 12,
      'text-valign': 'center',
      'text-halign': 'center',
      color: '#111',
      'font-family': 'system-ui, sans-serif',
    },
  },
  {
    selector: '.cluster',
    style: {
      'background-color': '#eef3fb',
      'border-color': '#5a6f8f',
      'border-width': 2,
      'text-valign': 'top',
      'font-weight': 'bold',
      padding: '24px',
      shape: 'round-rectangle',
    },
  },
  { selector: '.node', style: { shape: 'round-rectangle', width: 150, height: 46, 'background-color': '#fff', 'border-width': 2, 'border-color': '#777' } },
  { selector: '.gateway.active', style: { 'border-color': '#1b7f3b', 'border-width': 3, 'background-color': '#e9f7ee' } },
  { selector: '.gateway.passive', style: { 'border-color': '#9a6700', 'border-style': 'dashed', 'background-color': '#fff8e5' } },
  { selector: '.notready', style: { 'border-color': '#b3261e', 'border-style': 'dotted' } },
  { selector: '.broker', style: { shape: 'diamond', width: 90, height: 90, 'background-color': '#f1ecfa', 'border-color': '#5b3f8f', 'border-width': 2 } },
  {
    selector: 'edge',
    style: {
      label: 'data(label)',
      'text-wrap': 'wrap',
      'font-size': 11,
      'curve-style': 'bezier',
      'text-background-color': '#fff',
      'text-background-opacity': 0.9,
      'text-background-padding': '2px',
    },
  },
  { selector: '.join', style: { 'line-color': '#9aa6b8', 'line-style': 'dotted', width: 2, 'font-size': 10 } },
  { selector: '.join.missing', style: { 'line-color': '#b3261e', 'line-style': 'dashed' } },
  { selector: '.tunnel.up', style: { 'line-color': '#1b7f3b', width: 4 } },
  { selector: '.tunnel.down', style: { 'line-color': '#b3261e', width: 4, 'line-style': 'dashed' } },
];

function Graph({ topo }: { topo: Topology }) {
  const box = useRef<HTMLDivElement>(null);
  const cy = useRef<cytoscape.Core | undefined>(undefined);
  useEffect(() => {
    if (!box.current) return;
    cy.current = cytoscape({ container: box.current, style: STYLE, elements: [], userZoomingEnabled: true, boxSelectionEnabled: false, autoungrabify: true });
    return () => cy.current?.destroy();
  }, []);
  useEffect(() => {
    const c = cy.current;
    if (!c) return;
    const els = elements(topo);
    const ids = new Set(els.map((e) => e.data.id as string));
    let added = false;
    c.batch(() => {
      c.elements()
        .filter((e) => !ids.has(e.id()))
        .remove();
      for (const e of els) {
        const have = c.getElementById(e.data.id as string);
        if (have.nonempty()) {
          have.data(e.data);
          have.classes(e.classes as string);
        } else {
          c.add(e);
          added = true;
        }
      }
    });
    if (added) c.fit(undefined, 30);
  }, [topo]);
  const summary = `${topo.clusters.length} clusters; ${topo.tunnels.filter((t) => t.status === 'connected').length} of ${topo.tunnels.length} tunnel ends connected`;
  return <div ref={box} class="graph" role="img" aria-label={`Topology graph: ${summary}. The tables below list the same.`} />;
}

export function TopologyView({ live, clusters }: { live: Live; clusters: string[] }) {
  const topo = topology(live, clusters);
  return (
    <>
      <Section title="Problems" id="problems">
        {topo.problems.length === 0 ? (
          <p data-testid="no-problems">
            <Badge tone="ok">no problems</Badge> every tunnel is connected and every cluster has an active gateway
          </p>
        ) : (
          <ul class="problems" data-testid="problems">
            {topo.problems.map((p) => (
              <li>
                <Badge tone={p.severity === 'error' ? 'bad' : 'warn'}>{p.severity}</Badge> <strong>{p.what}</strong>
                {p.detail ? ` — ${p.detail}` : ''}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Graph" id="graph">
        <Graph topo={topo} />
      </Section>
      <Section title="Tunnels" id="tunnels">
        <Table
          caption="Tunnels between gateways, as each gateway reports them"
          testId="tunnels"
          head={['From', 'To cluster', 'Remote IP', 'Status', 'RTT avg.', 'Throughput', 'Bytes (tx / rx)']}
          empty="No tunnels reported yet."
          rows={topo.tunnels.map((t) => [
            `${t.cluster} (${t.gateway})`,
            t.peer,
            t.remoteIP,
            <Badge tone={t.status !== 'connected' ? 'bad' : tunnelStatusText(t) === t.status ? 'ok' : 'warn'} title={t.statusMessage}>
              {tunnelStatusText(t)}
            </Badge>,
            t.rttAvg ? formatRtt(t.rttAvg) : '–',
            rateText(t),
            t.txBytes === undefined ? '–' : `${formatBytes(t.txBytes)} / ${formatBytes(t.rxBytes ?? 0)}`,
          ])}
        />
      </Section>
      <Section title="Clusters and nodes" id="clusters">
        <Table
          caption="Clusters, their nodes and gateways"
          testId="clusters"
          head={['Cluster', 'Joined', 'Cluster CIDRs', 'Service CIDRs', 'Nodes', 'Gateways']}
          empty="No clusters."
          rows={topo.clusters.map((c) => [
            c.name,
            topo.broker ? <Badge tone={c.joined ? 'ok' : 'bad'}>{c.joined ? 'joined' : 'not joined'}</Badge> : 'no broker',
            c.clusterCIDRs.join(', ') || '–',
            c.serviceCIDRs.join(', ') || '–',
            c.nodes.map((n) => `${n.name} (${n.role}${n.ready ? '' : ', not ready'})`).join(', '),
            c.gateways.length === 0 ? (
              'none'
            ) : (
              <span>
                {c.gateways.map((g) => (
                  <Badge tone={g.haStatus === 'active' ? 'ok' : 'warn'} title={g.summary}>{`${g.node}: ${g.haStatus}`}</Badge>
                ))}
              </span>
            ),
          ])}
        />
      </Section>
    </>
  );
}
