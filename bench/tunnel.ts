// Throughput and RTT through the strait tunnel vs the direct path, in the same private
// namespace topology (test/fixtures/two-clusters.sh): pod A -> pod B, one TCP flow.
//   node dist/bench/tunnel.js [seconds]
// wireguard-go (userspace, from the Go module proxy) in the same topology is not part of
// this run yet.
import { probes, runInPrivateTree } from '../test/helpers/private-tree.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const seconds = Number(process.argv[2] ?? 5);

const script = `
ROOT=${JSON.stringify(root)}
DIRECT=1 source "$ROOT/test/fixtures/two-clusters.sh"
for _ in $(seq 60); do records gwA | grep -q '"status":"connected"' && break; sleep 0.1; done
ip netns exec podB iperf3 -s -D --logfile /run/iperf3.log
sleep 0.5
rtt() { # median TCP connect time (ms) over 21 tries: SRC DST
  for _ in $(seq 21); do ip netns exec podA curl -s -o /dev/null --interface "$1" -w '%{time_connect}\\n' "http://$2:8080/"; done | sort -n | sed -n 11p
}
echo "{\\"probe\\":\\"rtt-tunnel\\",\\"s\\":$(rtt 10.1.1.10 10.2.1.10)}"
echo "{\\"probe\\":\\"rtt-direct\\",\\"s\\":$(rtt 10.4.1.10 10.3.1.10)}"
echo "{\\"probe\\":\\"iperf-tunnel\\",\\"r\\":$(ip netns exec podA iperf3 -c 10.2.1.10 -t ${seconds} -J | tr -d '\\n')}"
echo "{\\"probe\\":\\"iperf-direct\\",\\"r\\":$(ip netns exec podA iperf3 -c 10.3.1.10 -B 10.4.1.10 -t ${seconds} -J | tr -d '\\n')}"
echo "{\\"probe\\":\\"records\\",\\"r\\":$(records gwA)}"
`;

interface Iperf { end: { sum_received: { bits_per_second: number }; streams: { sender: { mean_rtt?: number } }[] } }

async function main(): Promise<void> {
  const r = await runInPrivateTree(script, { timeoutMs: 120_000 + seconds * 4000 });
  const p = probes(r.stdout);
  if (r.code !== 0 || !p.get('iperf-tunnel')) {
    console.error(r.stdout, r.stderr);
    process.exit(1);
  }
  const t = (p.get('iperf-tunnel')?.['r'] as Iperf).end;
  const d = (p.get('iperf-direct')?.['r'] as Iperf).end;
  const gbit = (x: Iperf['end']) => x.sum_received.bits_per_second / 1e9;
  const rttT = Number(p.get('rtt-tunnel')?.['s']) * 1000;
  const rttD = Number(p.get('rtt-direct')?.['s']) * 1000;
  const rec = p.get('records')?.['r'] as { connections: { rttAvg: string }[] };
  console.log(`strait tunnel benchmark (${seconds}s per iperf3 run, single TCP flow, pod A -> pod B)`);
  console.log(`  throughput  tunnel ${gbit(t).toFixed(3)} Gbit/s   direct ${gbit(d).toFixed(3)} Gbit/s   ratio ${(gbit(t) / gbit(d)).toFixed(3)}x`);
  console.log(`  TCP connect tunnel ${rttT.toFixed(3)} ms   direct ${rttD.toFixed(3)} ms   ratio ${(rttT / rttD).toFixed(2)}x  (median of 21)`);
  console.log(`  iperf3 mean_rtt under load: tunnel ${((t.streams[0]?.sender.mean_rtt ?? 0) / 1000).toFixed(3)} ms   direct ${((d.streams[0]?.sender.mean_rtt ?? 0) / 1000).toFixed(3)} ms`);
  console.log(`  gateway keepalive RTT avg (gw-a -> gw-b): ${rec.connections[0]?.rttAvg}`);
  console.log('  wireguard-go comparison: not run yet (needs wireguard-go built from the Go module proxy)');
}

void main();
