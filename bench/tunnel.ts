// Throughput and RTT through the strait tunnel vs the direct path and vs wireguard-go,
// in the same private namespace topology (test/fixtures/two-clusters.sh), one TCP flow:
//   pod A -> pod B     strait (agent VXLAN + gateway tunnel) | direct forwarding | wireguard-go between the gateways
//   gw A -> gw B       strait tunnel | direct | wireguard-go
//   node dist/bench/tunnel.js [seconds]
// wireguard-go comes from scripts/build-wireguard-go.sh (.state/bin/wireguard-go) or
// $WIREGUARD_GO; without it that column is skipped. TUN_MTU/POD_MTU change the MTU.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { probes, runInPrivateTree } from '../test/helpers/private-tree.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const seconds = Number(process.argv[2] ?? 5);
const wgBin = process.env['WIREGUARD_GO'] ?? join(root, '.state', 'bin', 'wireguard-go');
const haveWg = existsSync(wgBin);

function wgKeys(): { priv: string; pub: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    priv: privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16).toString('hex'),
    pub: publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex'),
  };
}
const ka = wgKeys();
const kb = wgKeys();

const wgSetup = `
WG=${JSON.stringify(wgBin)}
# one interface name per namespace: the UAPI sockets share /run/wireguard
ip netns exec gwA env WG_PROCESS_FOREGROUND=1 "$WG" wga > /run/wg-a.log 2>&1 &
ip netns exec gwB env WG_PROCESS_FOREGROUND=1 "$WG" wgb > /run/wg-b.log 2>&1 &
for _ in $(seq 100); do [ -S /run/wireguard/wga.sock ] && [ -S /run/wireguard/wgb.sock ] && break; sleep 0.1; done
ip netns exec gwA node "$ROOT/bench/wg-uapi.mjs" wga ${ka.priv} 51820 ${kb.pub} 203.0.113.2:51820 10.200.0.2/32,10.5.0.0/16
ip netns exec gwB node "$ROOT/bench/wg-uapi.mjs" wgb ${kb.priv} 51820 ${ka.pub} 203.0.113.1:51820 10.200.0.1/32,10.6.0.0/16
ip -n gwA addr add 10.200.0.1/24 dev wga; ip -n gwA link set wga up
ip -n gwB addr add 10.200.0.2/24 dev wgb; ip -n gwB link set wgb up
# pod path through wireguard-go: podA 10.6.1.10 -> podB 10.5.1.10, plain forwarding to the gateways
ip -n podA addr add 10.6.1.10/32 dev eth0; ip -n podB addr add 10.5.1.10/32 dev eth0
ip -n wkA route add 10.5.0.0/16 via 172.16.1.1; ip -n gwA route add 10.5.0.0/16 dev wga
ip -n gwB route add 10.5.1.0/24 via 172.16.2.11; ip -n wkB route add 10.5.1.10/32 dev pod0
ip -n wkB route add 10.6.0.0/16 via 172.16.2.1; ip -n gwB route add 10.6.0.0/16 dev wgb
ip -n gwA route add 10.6.1.0/24 via 172.16.1.11; ip -n wkA route add 10.6.1.10/32 dev pod0
`;

const script = `
ROOT=${JSON.stringify(root)}
DIRECT=1 source "$ROOT/test/fixtures/two-clusters.sh"
for _ in $(seq 60); do records gwA | grep -q '"status":"connected"' && break; sleep 0.1; done
${haveWg ? wgSetup : ''}
# gateway-to-gateway addresses behind the strait tunnel
ip -n gwA addr add 10.1.255.1/32 dev strait-gw; ip -n gwB addr add 10.2.255.1/32 dev strait-gw
ip netns exec podB iperf3 -s -D --logfile /run/iperf3-pod.log
ip netns exec gwB iperf3 -s -D --logfile /run/iperf3-gw.log
sleep 0.5
rtt() { # median TCP connect time (s) over 21 tries: SRC DST
  for _ in $(seq 21); do ip netns exec podA curl -s -o /dev/null --interface "$1" -w '%{time_connect}\\n' "http://$2:8080/"; done | sort -n | sed -n 11p
}
iperf() { # NAME NS SRC DST
  echo "{\\"probe\\":\\"$1\\",\\"r\\":$(ip netns exec $2 iperf3 -c $4 -B $3 -t ${seconds} -J | tr -d '\\n')}"
}
echo "{\\"probe\\":\\"rtt-pod-strait\\",\\"s\\":$(rtt 10.1.1.10 10.2.1.10)}"
echo "{\\"probe\\":\\"rtt-pod-direct\\",\\"s\\":$(rtt 10.4.1.10 10.3.1.10)}"
${haveWg ? 'echo "{\\"probe\\":\\"rtt-pod-wg\\",\\"s\\":$(rtt 10.6.1.10 10.5.1.10)}"' : ''}
iperf pod-strait podA 10.1.1.10 10.2.1.10
iperf pod-direct podA 10.4.1.10 10.3.1.10
${haveWg ? 'iperf pod-wg podA 10.6.1.10 10.5.1.10' : ''}
iperf gw-strait gwA 10.1.255.1 10.2.255.1
iperf gw-direct gwA 203.0.113.1 203.0.113.2
${haveWg ? 'iperf gw-wg gwA 10.200.0.1 10.200.0.2' : ''}
echo "{\\"probe\\":\\"records\\",\\"r\\":$(records gwA)}"
`;

interface IperfEnd { sum_received: { bits_per_second: number }; streams: { sender: { mean_rtt?: number } }[] }

async function main(): Promise<void> {
  const r = await runInPrivateTree(script, { timeoutMs: 180_000 + seconds * 8000 });
  const p = probes(r.stdout);
  if (r.code !== 0 || !p.get('pod-strait')) {
    console.error(r.stdout, r.stderr);
    process.exit(1);
  }
  const end = (k: string): IperfEnd | undefined => (p.get(k)?.['r'] as { end: IperfEnd } | undefined)?.end;
  const gbit = (k: string): number => (end(k)?.sum_received.bits_per_second ?? NaN) / 1e9;
  const mrtt = (k: string): number => (end(k)?.streams[0]?.sender.mean_rtt ?? NaN) / 1000;
  const ms = (k: string): number => Number(p.get(k)?.['s']) * 1000;
  const rec = p.get('records')?.['r'] as { connections: { rttAvg: string }[] };
  const f = (x: number, d = 3): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  console.log(`strait tunnel benchmark: ${seconds}s per iperf3 run, single TCP flow, inner MTU ${process.env['TUN_MTU'] ?? 1400}`);
  for (const where of ['pod', 'gw'] as const) {
    const s = gbit(`${where}-strait`);
    const d = gbit(`${where}-direct`);
    const w = gbit(`${where}-wg`);
    console.log(`  ${where === 'pod' ? 'pod A -> pod B' : 'gw A -> gw B  '}  strait ${f(s)} Gbit/s   direct ${f(d)} Gbit/s   wireguard-go ${haveWg ? `${f(w)} Gbit/s` : 'not run'}   strait/direct ${f(s / d)}x   strait/wireguard-go ${haveWg ? `${f(s / w)}x` : 'n/a'}`);
    console.log(`                  iperf3 mean RTT under load: strait ${f(mrtt(`${where}-strait`))} ms   direct ${f(mrtt(`${where}-direct`))} ms   wireguard-go ${f(mrtt(`${where}-wg`))} ms`);
  }
  const rs = ms('rtt-pod-strait');
  const rd = ms('rtt-pod-direct');
  const rw = ms('rtt-pod-wg');
  console.log(`  pod TCP connect (median of 21): strait ${f(rs)} ms   direct ${f(rd)} ms   wireguard-go ${f(rw)} ms   strait/direct ${f(rs / rd, 2)}x   strait/wireguard-go ${f(rs / rw, 2)}x`);
  console.log(`  gateway keepalive RTT avg (gw-a -> gw-b, after the runs): ${rec.connections[0]?.rttAvg}`);
  if (!haveWg) console.log('  wireguard-go: not found; build it with scripts/build-wireguard-go.sh');
}

void main();
