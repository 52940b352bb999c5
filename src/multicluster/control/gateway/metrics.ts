// Prometheus metrics of the gateway: plain integer counters of the data plane, read
// by prom-client at scrape time (collect()), never updated per packet here.
import { Counter, Gauge, Registry } from 'prom-client';
import type { Gateway } from '../../dataplane/gateway/index.js';
import { registerTunnelHealthMetrics } from '../health/index.js';

/** The tunnels: bytes, packets, handshakes, drops, peer status (t = the gateway's tunnel). */
function tunnelMetrics(registry: Registry, t: Gateway['tunnel']): void {
  tunnelTrafficMetrics(registry, t);
  tunnelHandshakeMetrics(registry, t);
  tunnelPeerMetrics(registry, t);
}

/** Bytes and packets carried per remote cluster and direction. */
function tunnelTrafficMetrics(registry: Registry, t: Gateway['tunnel']): void {
  new Counter({
    name: 'strait_tunnel_bytes_total',
    help: 'Inner IPv4 bytes carried per tunnel (remote cluster) and direction',
    labelNames: ['cluster', 'direction'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of t.peers) {
        this.inc({ cluster: p.clusterId, direction: 'tx' }, p.tx.bytes);
        this.inc({ cluster: p.clusterId, direction: 'rx' }, p.rx.bytes);
      }
    },
  });
  new Counter({
    name: 'strait_tunnel_packets_total',
    help: 'Inner IPv4 packets carried per tunnel (remote cluster) and direction',
    labelNames: ['cluster', 'direction'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of t.peers) {
        this.inc({ cluster: p.clusterId, direction: 'tx' }, p.tx.packets);
        this.inc({ cluster: p.clusterId, direction: 'rx' }, p.rx.packets);
      }
    },
  });
}

/** Handshakes, rekeys, cookie replies and drops, from the tunnel's counters. */
function tunnelHandshakeMetrics(registry: Registry, t: Gateway['tunnel']): void {
  new Counter({
    name: 'strait_tunnel_handshakes_total',
    help: 'Tunnel handshakes by event',
    labelNames: ['event'],
    registers: [registry],
    collect() {
      this.reset();
      const c = t.counters;
      this.inc({ event: 'initiated' }, c.handshakesInitiated);
      this.inc({ event: 'completed' }, c.handshakesCompleted);
      this.inc({ event: 'responded' }, c.handshakesResponded);
      this.inc({ event: 'timeout' }, c.handshakeTimeouts);
    },
  });
  new Counter({
    name: 'strait_tunnel_rekeys_total',
    help: 'Sessions replaced by a newer one (rekey by time or volume)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(t.counters.rekeys);
    },
  });
  new Counter({
    name: 'strait_tunnel_cookie_replies_total',
    help: 'Cookie replies sent while under handshake load',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(t.counters.cookiesSent);
    },
  });
  new Counter({
    name: 'strait_tunnel_drops_total',
    help: 'Packets dropped by reason (replay, auth, no_route, malformed, stale)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      const d = t.counters.drops;
      for (const reason of Object.keys(d) as (keyof typeof d)[]) this.inc({ reason }, d[reason]);
    },
  });
}

/** Each peer's status and keepalive RTT. */
function tunnelPeerMetrics(registry: Registry, t: Gateway['tunnel']): void {
  new Gauge({
    name: 'strait_tunnel_connected',
    help: '1 when the tunnel to the remote cluster is connected',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      for (const p of t.peers) this.set({ cluster: p.clusterId }, p.status === 'connected' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'strait_tunnel_rtt_seconds',
    help: 'Average round-trip time of tunnel keepalives (last 10)',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      this.reset();
      for (const p of t.peers) {
        const r = p.rttAvgMs;
        if (r !== undefined) this.set({ cluster: p.clusterId }, r / 1000);
      }
    },
  });
}

/** The VXLAN endpoint of the node agents and HA (active, passive and fenced drops). */
function vxlanAndHaMetrics(registry: Registry, gw: Gateway): void {
  new Counter({
    name: 'strait_vxlan_packets_total',
    help: 'VXLAN frames exchanged with node agents',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ direction: 'rx' }, gw.vxlan.rxPackets);
      this.inc({ direction: 'tx' }, gw.vxlan.txPackets);
    },
  });
  new Counter({
    name: 'strait_vxlan_bytes_total',
    help: 'Inner bytes of VXLAN frames exchanged with node agents',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ direction: 'rx' }, gw.vxlan.rxBytes);
      this.inc({ direction: 'tx' }, gw.vxlan.txBytes);
    },
  });
  new Gauge({
    name: 'strait_gateway_active',
    help: 'HA: 1 while this gateway holds the lease and is not fenced (always 1 for a single gateway)',
    registers: [registry],
    collect() {
      this.set(gw.haStatus === 'active' && !gw.isFenced ? 1 : 0);
    },
  });
  new Counter({
    name: 'strait_gateway_passive_drops_total',
    help: 'HA: tunnel packets that reached this gateway while it was passive',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(gw.vxlan.passiveDrops);
    },
  });
  new Counter({
    name: 'strait_gateway_fenced_drops_total',
    help: 'HA: tunnel datagrams not sent because the lease was not confirmed in time (a resumed former active gateway)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(gw.vxlan.fencedDrops);
    },
  });
}

/**
 * The native data path (dataplane/gateway/native-path.ts). Registered first: its collect()
 * folds the thread's counts into the tunnel's and the gateway's before they are read.
 */
function nativePathMetrics(registry: Registry, gw: Gateway): void {
  let stats: ReturnType<Gateway['nativePathStats']>;
  new Gauge({
    name: 'strait_gateway_native_path',
    help: '1 while the bulk data path (tunnel receive, open, deliver; TUN read, seal, send) runs on its native thread',
    registers: [registry],
    collect() {
      stats = gw.nativePathStats();
      this.set(stats ? 1 : 0);
    },
  });
  new Counter({
    name: 'strait_gateway_native_path_packets_total',
    help: 'Native data path: messages opened and packets sealed on its thread, and tunnel datagrams (up_tunnel), TUN packets (up_tun) or agent VXLAN frames (up_vxlan) it handed to the JS path',
    labelNames: ['event'],
    registers: [registry],
    collect() {
      this.reset();
      if (!stats) return;
      this.inc({ event: 'opened' }, stats.opened);
      this.inc({ event: 'sealed' }, stats.sealed);
      this.inc({ event: 'up_tunnel' }, stats.upTunnel);
      this.inc({ event: 'up_tun' }, stats.upTun);
      this.inc({ event: 'up_vxlan' }, stats.upVxlan);
      this.inc({ event: 'up_dropped' }, stats.upDropped);
      this.inc({ event: 'send_errors' }, stats.sendErrors);
      this.inc({ event: 'tun_write_errors' }, stats.tunWriteErrors);
    },
  });
}

export function gatewayRegistry(gw: Gateway): Registry {
  const registry = new Registry();
  nativePathMetrics(registry, gw);
  tunnelMetrics(registry, gw.tunnel);
  vxlanAndHaMetrics(registry, gw);
  registerTunnelHealthMetrics(registry, gw.tunnel);
  return registry;
}
