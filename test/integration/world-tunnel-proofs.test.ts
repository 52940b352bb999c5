// The tunnel (docs/tunnel-protocol.md) in the default world itself (`strait up`, not a private topology):
// (a) the client pod on cluster-a's worker curls the echo pod of cluster-b by pod IP: 200,
//     remoteAddress = the client pod's IP, and the worker's node agent carried it (VXLAN hop);
// (b) tshark on the link between the two gateway nodes during that request (a marker in the
//     body): only UDP 4500 <-> 4500, never the marker;
// (c) replaying the captured tunnel packets into cluster-b's gateway raises its replay-drop
//     counter (from its /metrics) and delivers nothing (no inner packet, no echo request);
// (d) `strait show connections --cluster cluster-a` shows cluster-b connected with an RTT.
// And faults (docs/faults.md): killing the control module and the multicluster daemons
// (the broker's sync) leaves the established tunnel alone (no re-handshake, traffic flows).
// Also: the tunnels run on the join's PSK (broker-info), not a world constant, and a wrong
// PSK gives no tunnel and a clear error on both sides. (The wrong-PSK test runs before
// the faults test: a restarted multicluster daemon writes the join's PSK again.)
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { curlInWorld, pidsByCommandLine, probeFromPod } from '../helpers/world-ha.js';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';
import { waitFor } from '../helpers/wait.js';

const MARKER = 'STRAIT-MARKER-7e11-world-a9c3';

let world: TestWorld;
let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-proofs-'));
  world = upWorld();
});
after(() => {
  world?.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll a check of the running world (CLI calls, logs) every 100 ms. */
const eventually = async <T>(what: string, fn: () => T | undefined | false, ms = 15_000): Promise<T> => (await waitFor(fn, ms, what, 100)) as T;

interface Node {
  name: string;
  role: string;
  underlayIP: string;
  publicIP?: string;
}
interface Cluster {
  name: string;
  nodes: Node[];
  pods: { name: string; ip: string; node?: string }[];
}
const cluster = (name: string): Cluster => world.record().clusters.find((c) => c.name === name) as unknown as Cluster;
const gwOf = (c: Cluster): Node => c.nodes.find((n) => n.role === 'gateway') as Node;

/** one sample of a Prometheus metric with the given labels text, e.g. `reason="replay"` */
function metric(text: string, name: string, labels: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

test("(d) show connections: cluster-b connected with an RTT; the tunnel PSK is the join's", async () => {
  const row = await eventually('cluster-b connected with an RTT in show connections', () => {
    const r = s('show', 'connections', '--cluster', 'cluster-a', '-o', 'json');
    if (r.status !== 0) return undefined;
    const c = (JSON.parse(r.stdout) as { connections: { cluster: string; status: string; rttAvg: string }[] }).connections.find(
      (x) => x.cluster === 'cluster-b',
    );
    return c?.status === 'connected' && /^[0-9.]+(ms|µs)$/.test(c.rttAvg) ? c : undefined;
  });
  assert.equal(row.status, 'connected');
  const text = s('show', 'connections', '--cluster', 'cluster-a');
  assert.match(text.stdout, /GATEWAY\s+CLUSTER\s+REMOTE IP\s+NAT\s+CABLE DRIVER\s+SUBNETS\s+STATUS\s+RTT avg\./);
  assert.match(text.stdout, /cluster-b\s+198\.18\.2\.1\s+no\s+strait-psk\s+10\.2\.0\.0\/16, 100\.2\.0\.0\/16\s+connected\s+[0-9.]+(ms|µs)/);

  // the gateways' PSK is the broker-info PSK (docs/multicluster.md) (48 bytes, new per deploy), from the join's Secret
  const info = JSON.parse(Buffer.from(readFileSync(join(world.stateDir, 'broker-info.subm'), 'utf8').trim(), 'base64').toString('utf8')) as {
    ipsecPSK: { data: { psk: string } };
  };
  assert.equal(Buffer.from(info.ipsecPSK.data.psk, 'base64').length, 48);
  for (const c of ['cluster-a', 'cluster-b']) {
    const file = join(world.stateDir, 'tunnel', `${c}.psk`);
    assert.equal(readFileSync(file, 'utf8').trim(), info.ipsecPSK.data.psk, `${c}'s gateway PSK file holds the broker-info PSK`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  }
  assert.equal(existsSync(join(world.stateDir, 'tunnel', 'psk')), false, 'no world-wide PSK constant any more');
});

test('(a)(b)(c) client -> echo of cluster-b by pod IP through VXLAN and the tunnel; the wire shows only UDP 4500 ciphertext; replays are dropped', async () => {
  const rec = world.record();
  const a = cluster('cluster-a');
  const b = cluster('cluster-b');
  const client = a.pods.find((p) => p.name === 'client')!;
  const echo = b.pods.find((p) => p.name.startsWith('echo'))!;
  assert.equal(client.node, 'worker', 'the client runs on a worker node: the VXLAN hop is used');
  const worker = a.nodes.find((n) => n.name === 'worker')!;
  const gwA = gwOf(a);
  const gwB = gwOf(b);
  const sup = String(rec.supervisorPid);
  const agentCounters = () =>
    (JSON.parse(curlInWorld(rec.supervisorPid, `http://${worker.underlayIP}:9464/records`)) as { counters: { txPackets: number; pumpReads: number } }).counters;
  const agentTx = () => agentCounters().txPackets;

  // capture on cluster-a's gateway WAN link (the root end of its eth1), between the two gateways only
  const pcap = join(tmp, 'wan.pcap');
  const tshark = spawn('nsenter', ['-t', sup, '-n', 'tshark', '-q', '-i', 'c0g0', '-f', `host ${gwA.publicIP} and host ${gwB.publicIP}`, '-w', pcap], {
    stdio: 'ignore',
  });
  await eventually('tshark writing', () => existsSync(pcap) && statSync(pcap).size > 0, 15_000);
  await sleep(1000);

  const txBefore = agentTx();
  const pumpBefore = agentCounters().pumpReads;
  const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', '-w', '\\n%{http_code}', '--data', MARKER, `http://${echo.ip}:8080/`]);
  const lines = r.stdout.trim().split('\n');
  const code = lines.pop();
  assert.equal(code, '200', `${r.stdout}${r.stderr}`);
  const body = JSON.parse(lines.join('\n')) as { remoteAddress: string; cluster: string; method: string };
  assert.equal(body.cluster, 'cluster-b');
  assert.equal(body.method, 'POST');
  assert.equal(body.remoteAddress, client.ip, "the echo in cluster-b sees the client pod's own address");
  assert.ok(agentTx() > txBefore, "the worker's node agent wrapped the request in VXLAN to its gateway");
  assert.ok(agentCounters().pumpReads > pumpBefore, "the agent's native pump carried it (the strait gateway answered the hello)");

  await sleep(1500); // keepalives too
  tshark.kill('SIGINT');
  await new Promise((res) => tshark.on('close', res));
  const raw = readFileSync(pcap);
  assert.equal(raw.includes(Buffer.from(MARKER)), false, 'the marker never appears on the wire');
  const frames = spawnSync('tshark', ['-r', pcap, '-T', 'fields', '-e', 'frame.protocols', '-e', 'ip.proto', '-e', 'udp.srcport', '-e', 'udp.dstport'], {
    encoding: 'utf8',
  })
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  // link-layer address resolution (ARP) aside, every packet between the gateways is UDP 4500 <-> 4500
  const fields = frames.filter((f) => !/^eth:ethertype:arp(\t|$)/.test(f)).map((f) => f.split('\t').slice(1).join('\t'));
  assert.ok(fields.length >= 4, `captured the request's packets: ${fields.length}`);
  assert.deepEqual([...new Set(fields)], ['17\t4500\t4500'], `only UDP 4500 <-> 4500 between the gateways: ${[...new Set(frames)].join(' | ')}`);

  // (c) replay what gateway A sent to gateway B, from the world root, into gateway B's UDP 4500
  const payloads = spawnSync('tshark', ['-r', pcap, '-Y', `ip.src==${gwA.publicIP} && udp.dstport==4500`, '-T', 'fields', '-e', 'udp.payload'], {
    encoding: 'utf8',
  })
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  assert.ok(payloads.length > 0);
  const metricsB = () => curlInWorld(rec.supervisorPid, `http://${gwB.underlayIP}:9464/metrics`);
  const echoRequests = () => metric(curlInWorld(rec.supervisorPid, `http://${echo.ip}:9464/metrics`) + '\n', 'strait_echo_requests_total', '');
  const before = metricsB();
  const echoBefore = echoRequests();
  const hex = join(tmp, 'replay.hex');
  spawnSync('sh', ['-c', `cat > ${hex}`], { input: payloads.join('\n') });
  const sent = spawnSync(
    'nsenter',
    [
      '-t',
      sup,
      '-n',
      process.execPath,
      '-e',
      `
const d = require('node:dgram').createSocket('udp4');
const lines = require('node:fs').readFileSync(${JSON.stringify(hex)}, 'utf8').split('\\n').filter(Boolean);
let i = 0;
const next = () => { if (i >= lines.length) { d.close(); console.log(lines.length); return; } d.send(Buffer.from(lines[i++].replace(/:/g, ''), 'hex'), 4500, ${JSON.stringify(gwB.publicIP)}, next); };
next();`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(sent.status, 0, sent.stderr);
  assert.equal(Number(sent.stdout.trim()), payloads.length);
  await sleep(500);
  const afterM = metricsB();
  const replayBefore = metric(before, 'strait_tunnel_drops_total', 'reason="replay"');
  const replayAfter = metric(afterM, 'strait_tunnel_drops_total', 'reason="replay"');
  assert.ok(replayAfter > replayBefore, `replay drops rose: ${replayBefore} -> ${replayAfter}`);
  const rx = (m: string) => metric(m, 'strait_tunnel_packets_total', 'cluster="cluster-a",direction="rx"');
  assert.equal(rx(afterM), rx(before), 'no replayed packet was delivered into cluster-b');
  assert.equal(echoRequests(), echoBefore, 'the echo got no replayed request');
});

test("wrong PSK in the world: no tunnel and a clear error on both gateways; the join's PSK brings it back", async () => {
  const rec = world.record();
  const gwA = gwOf(cluster('cluster-a'));
  const echo = cluster('cluster-b').pods.find((p) => p.name.startsWith('echo'))!;
  const pskFile = join(world.stateDir, 'tunnel', 'cluster-b.psk');
  const good = readFileSync(pskFile, 'utf8');
  const logA = join(world.stateDir, 'logs', 'cluster-a.gateway.gateway.log');
  const logB = join(world.stateDir, 'logs', 'cluster-b.gateway.gateway.log');
  const sizeA = statSync(logA).size;
  const sizeB = statSync(logB).size;
  const tail = (f: string, from: number) => readFileSync(f).subarray(from).toString('utf8');
  const records = () =>
    (
      JSON.parse(curlInWorld(rec.supervisorPid, `http://${gwA.underlayIP}:9464/records`) || '{"connections":[{}]}') as {
        connections: { status?: string; statusMessage?: string }[];
      }
    ).connections[0]!;
  const restart = (c: string) => {
    for (const pid of pidsByCommandLine(`--config ${join(world.stateDir, 'tunnel', `${c}.gateway.json`)}`)) process.kill(pid, 'SIGKILL');
  };
  try {
    writeFileSync(pskFile, Buffer.from(randomFill48()).toString('base64') + '\n', { mode: 0o600 }); // not the broker-info PSK
    restart('cluster-b');
    restart('cluster-a');
    await eventually('a PSK error on both sides', () => /different PSK/.test(tail(logA, sizeA)) && /different PSK/.test(tail(logB, sizeB)), 40_000);
    assert.notEqual(records().status, 'connected');
    const curl = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', `http://${echo.ip}:8080/`]);
    assert.notEqual(curl.status, 0, 'no traffic without a tunnel');
  } finally {
    writeFileSync(pskFile, good, { mode: 0o600 });
    restart('cluster-b');
  }
  await eventually("connected again with the join's PSK", () => records().status === 'connected', 20_000);
  const ok = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', `http://${echo.ip}:8080/`]);
  assert.equal(ok.status, 0, ok.stderr);
});

test('faults: killing the control module and the multicluster daemons (broker sync) leaves the established tunnel up and traffic flowing', async () => {
  const rec = world.record();
  const gwA = gwOf(cluster('cluster-a'));
  const echo = cluster('cluster-b').pods.find((p) => p.name.startsWith('echo'))!;
  const records = () =>
    (
      JSON.parse(curlInWorld(rec.supervisorPid, `http://${gwA.underlayIP}:9464/records`)) as {
        connections: { cluster: string; status: string; handshakes: number }[];
      }
    ).connections[0]!;
  await eventually('connected', () => records().status === 'connected');
  await sleep(1500); // handshakes of a fresh (re)connection settle
  const before = records();
  assert.equal(before.status, 'connected');
  const probes = probeFromPod(world.stateDir, 'cluster-a/default/client', `http://${echo.ip}:8080/`, 20, 3000);
  await probes.started;
  await sleep(300);
  const victims = [
    ...pidsByCommandLine(`--config ${join(world.stateDir, 'cluster-a.multicluster.json')}`),
    ...pidsByCommandLine(`--config ${join(world.stateDir, 'cluster-b.multicluster.json')}`),
    ...pidsByCommandLine(`--state-dir ${join(world.stateDir, 'control')}`),
  ];
  assert.ok(victims.length >= 3, `found the control module and both multicluster daemons: ${victims.join(',')}`);
  for (const pid of victims) process.kill(pid, 'SIGKILL');
  const result = await probes.done;
  assert.equal(result.failed, 0, `no request failed while they died: ${JSON.stringify(result)}`);
  assert.ok(result.ok > 0);
  const afterR = records();
  assert.equal(afterR.status, 'connected');
  assert.equal(afterR.handshakes, before.handshakes, 'the tunnel was not re-established: it never went down');
});

function randomFill48(): Uint8Array {
  const b = new Uint8Array(48);
  for (let i = 0; i < b.length; i++) b[i] = (i * 37 + 11) & 0xff;
  return b;
}
