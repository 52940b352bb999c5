// Source address spoofing across clusters, as a pod would try it in the default world: the
// client pod of cluster-a writes its own VXLAN frame (VNI 100, inner IPv4/UDP with the
// address of another pod of cluster-a as source) and sends it straight to its gateway's
// UDP 4800. The gateway must take VXLAN only from the cluster's node agents, and from a
// node only packets of that node's pods: the echo pod of cluster-b never sees the
// spoofed source, while a genuine datagram of the same pod gets through.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { curlInWorld } from '../helpers/world-ha.js';
import { BIN, upWorld, type TestWorld } from '../helpers/world.js';
import { waitFor } from '../helpers/wait.js';

interface Node {
  name: string;
  role: string;
  underlayIP: string;
  podCIDR: string;
}
interface Pod {
  name: string;
  ip: string;
  node: string;
}
interface Cluster {
  name: string;
  nodes: Node[];
  pods: Pod[];
}

let world: TestWorld;
before(() => {
  world = upWorld();
});
after(() => {
  world?.cleanup();
});

const cluster = (name: string): Cluster => world.record().clusters.find((c) => c.name === name) as unknown as Cluster;
const PORT = 9999;

/** Runs in the echo pod of cluster-b: prints "<source address> <payload>" per datagram on UDP 9999. */
const LISTENER = `
const s = require('node:dgram').createSocket('udp4');
s.on('message', (m, r) => console.log(r.address + ' ' + m.toString()));
s.bind(${PORT}, '0.0.0.0', () => console.log('listening'));
setTimeout(() => process.exit(0), Number(process.argv[1]));`;

/** Runs in the client pod: an IPv4/UDP packet from argv[2] to argv[3], in a VXLAN frame to argv[1]:4800. */
const FORGE = `
const [gw, src, dst, text] = process.argv.slice(1);
const ip = (a) => Buffer.from(a.split('.').map(Number));
const payload = Buffer.from(text);
const udp = Buffer.alloc(8 + payload.length);
udp.writeUInt16BE(40000, 0); udp.writeUInt16BE(${PORT}, 2); udp.writeUInt16BE(udp.length, 4); payload.copy(udp, 8);
const h = Buffer.alloc(20);
h[0] = 0x45; h.writeUInt16BE(20 + udp.length, 2); h.writeUInt16BE(7, 4); h[8] = 64; h[9] = 17;
ip(src).copy(h, 12); ip(dst).copy(h, 16);
let sum = 0; for (let i = 0; i < 20; i += 2) sum += h.readUInt16BE(i);
while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
h.writeUInt16BE(~sum & 0xffff, 10);
const vx = Buffer.alloc(22); vx[0] = 0x08; vx.writeUIntBE(100, 4, 3); vx.writeUInt16BE(0x0800, 20);
const s = require('node:dgram').createSocket('udp4');
let n = 0;
const next = () => { if (n++ === 5) { s.close(); return; } s.send(Buffer.concat([vx, h, udp]), 4800, gw, () => setTimeout(next, 20)); };
next();`;

/** Runs in the client pod: a plain datagram to argv[1] (routed by the node agent as always). */
const GENUINE = `
const s = require('node:dgram').createSocket('udp4');
let n = 0;
const next = () => { if (n++ === 5) { s.close(); return; } s.send(Buffer.from(process.argv[2]), ${PORT}, process.argv[1], () => setTimeout(next, 20)); };
next();`;

function metric(text: string, name: string, labels: string): number {
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) && line.includes(labels)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  return 0;
}

test("a pod's forged VXLAN frame to its gateway never reaches the remote cluster with another pod's source", async () => {
  const a = cluster('cluster-a');
  const b = cluster('cluster-b');
  const client = a.pods.find((p) => p.name === 'client')!;
  const echo = b.pods.find((p) => p.name.startsWith('echo'))!;
  const gwA = a.nodes.find((n) => n.role === 'gateway')!;
  // another pod's address of cluster-a: on the gateway node, not the client's worker
  const [net] = gwA.podCIDR.split('/') as [string];
  const victim = net
    .split('.')
    .map(Number)
    .map((o, i) => (i === 3 ? o + 7 : o))
    .join('.');
  assert.notEqual(client.node, gwA.name);

  // listen in cluster-b's echo pod (at most 120 s: killed when the test ends; 25 s ran out at load 30)
  const lines: string[] = [];
  const listener = spawn(
    process.execPath,
    [BIN, 'exec', '--state-dir', world.stateDir, `cluster-b/default/${echo.name}`, '--', process.execPath, '-e', LISTENER, '120000'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  listener.stdout.setEncoding('utf8');
  listener.stdout.on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
  try {
    await waitFor(() => lines.includes('listening'), 20_000, 'the listener in the echo pod');

    // the control: the client's own datagrams through its node agent arrive with its address
    await waitFor(
      () => {
        world.exec('cluster-a/default/client', [process.execPath, '-e', GENUINE, echo.ip, 'genuine']);
        return lines.some((l) => l === `${client.ip} genuine`);
      },
      20_000,
      'a genuine datagram of the client pod at the echo pod (the tunnel is up)',
    );

    const metrics = () => curlInWorld(world.record().supervisorPid, `http://${gwA.underlayIP}:9464/metrics`);
    const unknownBefore = metric(metrics(), 'strait_tunnel_drops_total', 'reason="unknown_sender"');
    // the attack: a frame of its own, straight to the gateway, as if it were a node agent
    const r = world.exec('cluster-a/default/client', [process.execPath, '-e', FORGE, gwA.underlayIP, victim, echo.ip, 'spoofed']);
    assert.equal(r.status, 0, r.stderr);
    // the client still gets through after the attack (the gateway did not fall over)
    await waitFor(
      () => {
        world.exec('cluster-a/default/client', [process.execPath, '-e', GENUINE, echo.ip, 'after']);
        return lines.some((l) => l === `${client.ip} after`);
      },
      20_000,
      'a genuine datagram after the forged ones',
    );
    await new Promise((res) => setTimeout(res, 500));
    assert.deepEqual(
      lines.filter((l) => l.endsWith(' spoofed')),
      [],
      `the echo pod saw forged datagrams: ${lines.join(' | ')}`,
    );
    assert.equal(
      lines.some((l) => l.startsWith(`${victim} `)),
      false,
      "nothing arrived with the other pod's address",
    );
    assert.ok(metric(metrics(), 'strait_tunnel_drops_total', 'reason="unknown_sender"') >= unknownBefore + 5, 'the gateway counted the forged frames');
  } finally {
    listener.kill();
  }
});
