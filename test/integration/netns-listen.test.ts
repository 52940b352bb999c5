// listenInNetns and inNetnsSync (native/src/netns.c). listenInNetns makes a listening socket inside another
// network namespace and leaves the calling thread in its own; a server adopting the fd
// accepts that namespace's connections and sees that namespace's peer addresses.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startEcho } from '../../src/world/workloads/index.js';
import { closeNetns, connectInNetns, inNetnsSync, listenInNetns, openNetns, socketInNetns } from '../../src/platform/netns/index.js';
import { treeSkip } from '../helpers/private-tree.js';

let holder: ChildProcess | undefined;
let nsPath = '';
const inNs = (args: string[]): SpawnSyncReturns<string> => spawnSync('nsenter', ['-t', String(holder?.pid), '-n', ...args], { encoding: 'utf8' });

before(async () => {
  if (treeSkip) return;
  // a private network namespace held by a sleeping process (gone with it)
  holder = spawn('unshare', ['--net', '--', 'sleep', '120'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 200));
  nsPath = `/proc/${holder.pid}/ns/net`;
  for (const cmd of [
    ['ip', 'link', 'set', 'lo', 'up'],
    ['ip', 'addr', 'add', '10.77.0.2/32', 'dev', 'lo'],
    ['ip', 'addr', 'add', '10.77.0.3/32', 'dev', 'lo'],
  ]) {
    const r = inNs(cmd);
    assert.equal(r.status, 0, r.stderr);
  }
});
after(() => {
  holder?.kill('SIGKILL');
});

/** LISTEN sockets (hex port) in a /proc/<pid>/net/tcp table */
const listenPorts = (pid: number | string): Set<number> =>
  new Set(
    readFileSync(`/proc/${pid}/net/tcp`, 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[3] === '0A')
      .map((f) => parseInt((f[1] ?? ':0').split(':')[1] ?? '0', 16)),
  );

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
      c.stdout.on('data', (b: Buffer) => {
        out += b.toString();
      });
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
  // a failed system call: STRAIT_ERR_SYSTEM_TOOL; a bad argument: a TypeError with STRAIT_ERR_USAGE
  const sys = 'STRAIT_ERR_SYSTEM_TOOL';
  const usage = 'STRAIT_ERR_USAGE';
  const cases: [string, () => unknown, RegExp, string][] = [
    ['missing namespace', () => listenInNetns('/run/netns/strait-test-does-not-exist', '0.0.0.0', 0), /does-not-exist: No such file/, sys],
    ['not a namespace', () => listenInNetns('/proc/self/status', '0.0.0.0', 0), /setns/, sys],
    ['bad address', () => listenInNetns(nsPath, 'not-an-ip', 0), /netnsListen: argument 2 \(address\) is not an IPv4 address: not-an-ip/, usage],
    ['bad port', () => listenInNetns(nsPath, '0.0.0.0', 70000), /netnsListen: argument 3 \(port\) must be an integer in \[0, 65535\]/, usage],
    ['address not in that namespace', () => listenInNetns(nsPath, '10.99.9.9', 0), /bind: Cannot assign requested address/, sys],
  ];
  for (const [name, fn, re, code] of cases) {
    assert.throws(fn, (err: Error & { code?: string }) => re.test(err.message) && err.code === code, name);
    assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, `${name}: back home`);
  }
});

test('inNetnsSync runs a function inside the namespace and always comes back', { skip: treeSkip }, () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  const theirs = readlinkSync(nsPath);
  assert.notEqual(theirs, mine);
  assert.equal(
    inNetnsSync(nsPath, () => readlinkSync('/proc/thread-self/ns/net')),
    theirs,
  );
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine);
  assert.throws(
    () =>
      inNetnsSync(nsPath, () => {
        throw new Error('boom inside');
      }),
    /boom inside/,
  );
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, 'back home after a throw');
  assert.throws(
    () => inNetnsSync('/run/netns/strait-test-does-not-exist', () => 1),
    (e: Error & { code?: string }) => e.code === 'STRAIT_ERR_SYSTEM_TOOL',
  );
});

/** packets counted by the rule with this comment in the held namespace's table strait_test */
const counted = (comment: string): number => {
  const out = inNs(['nft', 'list', 'table', 'ip', 'strait_test']).stdout;
  const line = out.split('\n').find((l) => l.includes(`comment "${comment}"`)) ?? '';
  return Number(/packets (\d+)/.exec(line)?.[1] ?? -1);
};

test('connectInNetns: the connection leaves from the other namespace, with the mark asked for', { skip: treeSkip }, async () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  const rules = spawnSync('nsenter', ['-t', String(holder?.pid), '-n', 'nft', '-f', '-'], {
    encoding: 'utf8',
    input:
      'table ip strait_test {\n chain out {\n  type filter hook output priority 0; policy accept;\n' +
      '  tcp flags syn meta mark 0x539 counter comment "marked"\n  tcp flags syn meta mark 0 counter comment "unmarked"\n }\n}\n',
  });
  assert.equal(rules.status, 0, rules.stderr);
  // a server in the held namespace only (10.77.0.2 does not exist in ours)
  const server = createServer((s: Socket) => {
    s.end(`${s.remoteAddress}\n`);
  });
  await new Promise<void>((res) => server.listen({ fd: listenInNetns(nsPath, '10.77.0.2', 0) }, res));
  const port = (server.address() as AddressInfo).port;
  const nsFd = openNetns(nsPath);
  const fetchPeer = (mark: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const c = connectInNetns(nsFd, mark, { host: '10.77.0.2', port });
      let out = '';
      c.on('data', (d: Buffer) => {
        out += d.toString();
      });
      c.on('end', () => resolve(out.trim()));
      c.on('error', reject);
    });
  try {
    assert.equal(await fetchPeer(0x539), '10.77.0.2', 'connected inside the held namespace (its own address as source)');
    assert.equal(counted('marked'), 1, 'SO_MARK 0x539 on the connection');
    assert.equal(await fetchPeer(0), '10.77.0.2');
    assert.equal(counted('marked'), 1);
    assert.ok(counted('unmarked') >= 1, 'mark 0: no mark');
    assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine, 'the thread is back in its own namespace');
    // made inside inNetnsSync's function, a socket comes back to that function's namespace, not ours
    const theirs = readlinkSync(nsPath);
    const inside = inNetnsSync(nsPath, () => {
      closeSync(socketInNetns(nsFd, 4, 0));
      return readlinkSync('/proc/thread-self/ns/net');
    });
    assert.equal(inside, theirs);
    assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine);
  } finally {
    closeNetns(nsFd);
    await new Promise((res) => server.close(res));
  }
});

test('openNetns refuses what is not a network namespace; a socket that cannot be made is a failed connection, not a throw', { skip: treeSkip }, async () => {
  const mine = readlinkSync('/proc/thread-self/ns/net');
  assert.throws(
    () => openNetns('/proc/self/status'),
    (e: Error & { code?: string }) => /not a network namespace/.test(e.message) && e.code === 'STRAIT_ERR_SYSTEM_TOOL',
  );
  assert.throws(() => openNetns('/proc/self/ns/mnt'), /not a network namespace/);
  assert.throws(() => openNetns('/run/netns/strait-test-does-not-exist'), /No such file/);
  // an fd that is not a namespace: setns fails, the socket is destroyed with that error
  const notNs = openNetns(nsPath);
  closeNetns(notNs);
  const err = await new Promise<Error>((resolve) => {
    const c = connectInNetns(notNs, 0, { host: '10.77.0.2', port: 9 });
    c.on('error', resolve);
  });
  assert.match(err.message, /setns|Bad file descriptor/);
  assert.equal(readlinkSync('/proc/thread-self/ns/net'), mine);
});
