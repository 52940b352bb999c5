// listenInNetns and inNetnsSync (native/src/netns.c). listenInNetns makes a listening socket inside another
// network namespace and leaves the calling thread in its own; a server adopting the fd
// accepts that namespace's connections and sees that namespace's peer addresses.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startEcho } from '../../src/world/workloads/index.js';
import { inNetnsSync, listenInNetns } from '../../src/platform/netns/index.js';
import { treeSkip } from '../helpers/private-tree.js';

let holder: ChildProcess | undefined;
let nsPath = '';
const inNs = (args: string[]): SpawnSyncReturns<string> =>
  spawnSync('nsenter', ['-t', String(holder?.pid), '-n', ...args], { encoding: 'utf8' });

before(async () => {
  if (treeSkip) return;
  // a private network namespace held by a sleeping process (gone with it)
  holder = spawn('unshare', ['--net', '--', 'sleep', '120'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 200));
  nsPath = `/proc/${holder.pid}/ns/net`;
  for (const cmd of [['ip', 'link', 'set', 'lo', 'up'], ['ip', 'addr', 'add', '10.77.0.2/32', 'dev', 'lo'], ['ip', 'addr', 'add', '10.77.0.3/32', 'dev', 'lo']]) {
    const r = inNs(cmd);
    assert.equal(r.status, 0, r.stderr);
  }
});
after(() => { holder?.kill('SIGKILL'); });

/** LISTEN sockets (hex port) in a /proc/<pid>/net/tcp table */
const listenPorts = (pid: number | string): Set<number> => new Set(readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)
  .map((l) => l.trim().split(/\s+/)).filter((f) => f[3] === '0A').map((f) => parseInt((f[1] ?? ':0').split(':')[1] ?? '0', 16)));

test('a server on the fd lives in the other namespace and sees its peers', { skip: treeSkip }, async () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  const fd = listenInNetns(nsPath, '0.0.0.0', 0);
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, 'the thread is back in its own namespace');
  const echo = await startEcho({ cluster: 'c', namespace: 'n', pod: 'p', node: 'x' }, 0, '0.0.0.0', fd);
  try {
    assert.ok(echo.port > 0);
    assert.ok(listenPorts(holder?.pid as number).has(echo.port), 'listening in the held namespace');
    assert.ok(!listenPorts('self').has(echo.port), 'not in our own namespace');
    // curl runs synchronously: give the server the event loop between requests
    const r = await new Promise<string>((resolve) => {
      const c = spawn('nsenter', ['-t', String(holder?.pid), '-n', 'curl', '-s', '-m', '5', '--interface', '10.77.0.3', `http://10.77.0.2:${echo.port}/x`]);
      let out = '';
      c.stdout.on('data', (b: Buffer) => { out += b.toString(); });
      c.on('exit', () => resolve(out));
    });
    const body = JSON.parse(r) as { remoteAddress: string; path: string; pod: string };
    assert.equal(body.remoteAddress, '10.77.0.3', 'the peer address of that namespace');
    assert.equal(body.path, '/x');
    assert.equal(body.pod, 'p');
  } finally {
    await echo.close();
  }
  assert.ok(!listenPorts(holder?.pid as number).has(echo.port), 'closed with the server');
});

test('errors name what failed and leave the thread at home', { skip: treeSkip }, () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  const cases: [string, () => unknown, RegExp][] = [
    ['missing namespace', () => listenInNetns('/run/netns/strait-test-does-not-exist', '0.0.0.0', 0), /does-not-exist: No such file/],
    ['not a namespace', () => listenInNetns('/proc/self/status', '0.0.0.0', 0), /setns/],
    ['bad address', () => listenInNetns(nsPath, 'not-an-ip', 0), /IPv4/],
    ['bad port', () => listenInNetns(nsPath, '0.0.0.0', 70000), /bad arguments/],
    ['address not in that namespace', () => listenInNetns(nsPath, '10.99.9.9', 0), /bind: Cannot assign requested address/],
  ];
  for (const [name, fn, re] of cases) {
    assert.throws(fn, (err: Error & { code?: string }) => re.test(err.message) && err.code === 'STRAIT_ERR_SYSTEM_TOOL', name);
    assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, `${name}: back home`);
  }
});

test('inNetnsSync runs a function inside the namespace and always comes back', { skip: treeSkip }, () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  const theirs = readlinkSync(nsPath);
  assert.notEqual(theirs, mine);
  assert.equal(inNetnsSync(nsPath, () => readlinkSync('/proc/thread-self/ns/net')), theirs);
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine);
  assert.throws(() => inNetnsSync(nsPath, () => { throw new Error('boom inside'); }), /boom inside/);
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, 'back home after a throw');
  assert.throws(() => inNetnsSync('/run/netns/strait-test-does-not-exist', () => 1), (e: Error & { code?: string }) => e.code === 'STRAIT_ERR_SYSTEM_TOOL');
});
