// The C addon's argument checks (native/src/common.c): every entry point of
// native/src/entries.h, called from JavaScript with missing or wrongly typed arguments,
// throws a TypeError with code STRAIT_ERR_USAGE that names the entry point and the
// argument (never a crash, never a call that goes on); a failed system call throws an Error
// with code STRAIT_ERR_SYSTEM_TOOL and the errno. Valid calls still work as before.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { native, type NativeAddon } from '../../src/platform/native/index.js';

const skip = (() => {
  try {
    native();
    return false;
  } catch {
    return 'no native addon';
  }
})();

type Call = (n: NativeAddon) => unknown;
/** [entry point, the argument the message must name, a call] */
type Bad = [keyof NativeAddon, string, Call];

const buf = Buffer.alloc(64);
const hdr = Buffer.alloc(22);
const secret = Buffer.alloc(32);
const counters = new Float64Array(8);
const pathCounters = new Float64Array(111);
const key = Buffer.alloc(32);
const salt = Buffer.alloc(4);
const fn = (): void => undefined;
// the arguments are wrong on purpose: cast once, here, so that the calls compile
const any = (n: NativeAddon): Record<keyof NativeAddon, (...args: unknown[]) => unknown> =>
  n as unknown as Record<keyof NativeAddon, (...args: unknown[]) => unknown>;

const bad: Bad[] = [
  ['tunOpen', 'needs 1 arguments', (n) => any(n).tunOpen()],
  ['tunOpen', '(name)', (n) => any(n).tunOpen(7)],
  ['tunOpen', '(name)', (n) => any(n).tunOpen('a-name-longer-than-ifnamsiz')],
  ['tunOpen', '(offload)', (n) => any(n).tunOpen('st0', 'yes')],
  ['tunStart', 'needs 3 arguments', (n) => any(n).tunStart(3, buf)],
  ['tunStart', '(fd)', (n) => any(n).tunStart(-1, buf, fn)],
  ['tunStart', '(buffer)', (n) => any(n).tunStart(3, 'x', fn)],
  ['tunStart', '(onPacket)', (n) => any(n).tunStart(3, buf, 5)],
  ['tunWrite', '(fd)', (n) => any(n).tunWrite('3', buf, 0, 1)],
  ['tunWrite', '(buffer)', (n) => any(n).tunWrite(3, [1, 2], 0, 1)],
  ['tunWrite', '(offset)', (n) => any(n).tunWrite(3, buf, -1, 1)],
  ['tunWrite', 'past the buffer', (n) => any(n).tunWrite(3, buf, 60, 10)],
  ['tunWritev', '(hdr)', (n) => any(n).tunWritev(3, null, buf, 0, 1)],
  ['tunWritev', '(length)', (n) => any(n).tunWritev(3, hdr, buf, 0, 'all')],
  ['tunClose', 'needs 1 arguments', (n) => any(n).tunClose()],
  ['tunClose', '(fd)', (n) => any(n).tunClose({})],
  ['udpOpen', '(address)', (n) => any(n).udpOpen(127, 0)],
  ['udpOpen', '(address) is not an IPv4 address: ::1', (n) => any(n).udpOpen('::1', 0)],
  ['udpOpen', '(port)', (n) => any(n).udpOpen('127.0.0.1', 70000)],
  ['udpOpen', '(bufBytes)', (n) => any(n).udpOpen('127.0.0.1', 0, 'big')],
  ['udpStart', '(onRecv)', (n) => any(n).udpStart(3, buf, undefined)],
  ['udpSend', 'needs 7 arguments', (n) => any(n).udpSend(3, buf, 0, 1)],
  ['udpSend', '(addr)', (n) => any(n).udpSend(3, buf, 0, 1, 0, '127.0.0.1', 9)],
  ['udpSend', '(port)', (n) => any(n).udpSend(3, buf, 0, 1, 0, 0x7f000001, -9)],
  ['udpClose', '(fd)', (n) => any(n).udpClose(-3)],
  ['netnsListen', '(netnsPath)', (n) => any(n).netnsListen(null, '127.0.0.1', 80)],
  ['netnsListen', '(nsFd)', (n) => any(n).netnsListen(-1, '127.0.0.1', 80)],
  ['netnsListen', '(address)', (n) => any(n).netnsListen('/proc/self/ns/net', 'not-an-address', 80)],
  ['netnsListen', '(mark)', (n) => any(n).netnsListen('/proc/self/ns/net', '127.0.0.1', 80, 5, 'm')],
  ['netnsCall', '(fn)', (n) => any(n).netnsCall('/proc/self/ns/net', 'fn')],
  ['netnsOpen', '(netnsPath)', (n) => any(n).netnsOpen('')],
  ['netnsOpen', '(netnsPath)', (n) => any(n).netnsOpen(3)],
  ['netnsSocket', '(family)', (n) => any(n).netnsSocket(3, 5, 0)],
  ['netnsSocket', '(nsFd)', (n) => any(n).netnsSocket(undefined, 4, 0)],
  ['getOriginalDst', '(fd)', (n) => any(n).getOriginalDst(-1)],
  ['getOriginalDst', 'needs 1 arguments', (n) => any(n).getOriginalDst()],
  ['pumpStart', 'needs 11 arguments', (n) => any(n).pumpStart(3, 4)],
  ['pumpStart', '(hdrVnet)', (n) => any(n).pumpStart(3, 4, hdr, Buffer.alloc(21), hdr, 1000, 1200, 1, 9, 0, counters)],
  ['pumpStart', '(fragSize)', (n) => any(n).pumpStart(3, 4, hdr, hdr, hdr, 10, 1200, 1, 9, 0, counters)],
  ['pumpStart', '(counters)', (n) => any(n).pumpStart(3, 4, hdr, hdr, hdr, 1000, 1200, 1, 9, 0, new Float32Array(8))],
  ['pumpStop', '(tunFd)', (n) => any(n).pumpStop('3')],
  ['tlsRelayStart', 'needs 9 arguments', (n) => any(n).tlsRelayStart(3, 4, 1)],
  ['tlsRelayStart', '(suite)', (n) => any(n).tlsRelayStart(3, 4, 3, secret, 0, secret, 0, buf, fn)],
  ['tlsRelayStart', '(readSecret)', (n) => any(n).tlsRelayStart(3, 4, 1, Buffer.alloc(31), 0, secret, 0, buf, fn)],
  ['tlsRelayStart', '(writeSeq)', (n) => any(n).tlsRelayStart(3, 4, 1, secret, 0, secret, -1, buf, fn)],
  ['tlsRelayStart', '(onEnd)', (n) => any(n).tlsRelayStart(3, 4, 1, secret, 0, secret, 0, buf, 'cb')],
  ['tlsRelayStop', '(id)', (n) => any(n).tlsRelayStop('1')],
  ['tlsTrafficKeys', '(secret)', (n) => any(n).tlsTrafficKeys(1, 'secret')],
  ['tlsTrafficKeys', '(suite)', (n) => any(n).tlsTrafficKeys(0, secret)],
  ['flockTry', '(fd)', (n) => any(n).flockTry('3')],
  ['tlsRecordOpen', '(keyIv)', (n) => any(n).tlsRecordOpen(1, Buffer.alloc(44), 0, buf)],
  ['tlsRecordOpen', '(record)', (n) => any(n).tlsRecordOpen(1, Buffer.alloc(28), 0, 'rec')],
  ['tunnelSessionNew', 'needs 5 arguments', (n) => any(n).tunnelSessionNew(key, salt, key, salt)],
  ['tunnelSessionNew', '(sendKey) must be 32 bytes', (n) => any(n).tunnelSessionNew(Buffer.alloc(16), salt, key, salt, 0)],
  ['tunnelSessionNew', '(recvSalt)', (n) => any(n).tunnelSessionNew(key, salt, key, 'salt', 0)],
  ['tunnelSessionNew', '(sendSeq)', (n) => any(n).tunnelSessionNew(key, salt, key, salt, -1)],
  ['tunnelSessionCtl', '(op)', (n) => any(n).tunnelSessionCtl(0, 9, 0)],
  ['tunnelSessionCtl', '(value)', (n) => any(n).tunnelSessionCtl(0, 0, 2 ** 53)],
  ['tunnelSessionCtl', '(id) is no live session', (n) => any(n).tunnelSessionCtl(123456789, 0, 0)],
  ['tunnelSeal', '(header) must be 16 bytes', (n) => any(n).tunnelSeal(0, Buffer.alloc(15), buf)],
  ['tunnelSeal', '(payload)', (n) => any(n).tunnelSeal(0, Buffer.alloc(16), 'text')],
  ['tunnelOpen', '(message)', (n) => any(n).tunnelOpen(0, 42)],
  ['tunnelOpen', '(id) is no live session', (n) => any(n).tunnelOpen(7, buf)],
  ['tunnelPathStart', 'needs 11 arguments', (n) => any(n).tunnelPathStart(3, 4, 5)],
  ['tunnelPathStart', '(vxlanHdr) must be 22 bytes', (n) => any(n).tunnelPathStart(3, 4, 5, buf, 4800, 1472, 3, 2 ** 48, 1000, pathCounters, fn)],
  ['tunnelPathStart', '(maxDatagram)', (n) => any(n).tunnelPathStart(3, 4, 5, hdr, 4800, 20, 3, 2 ** 48, 1000, pathCounters, fn)],
  ['tunnelPathStart', '(counters)', (n) => any(n).tunnelPathStart(3, 4, 5, hdr, 4800, 1472, 3, 2 ** 48, 1000, counters, fn)],
  ['tunnelPathStart', '(onUp)', (n) => any(n).tunnelPathStart(3, 4, 5, hdr, 4800, 1472, 3, 2 ** 48, 1000, pathCounters, null)],
  ['tunnelPathStop', '(id)', (n) => any(n).tunnelPathStop('one')],
  ['tunnelPathPeer', '(slot)', (n) => any(n).tunnelPathPeer(1, 16, 1, 4500, 3, new Float64Array(2), -1, 0, 1, 1)],
  ['tunnelPathPeer', '(subnets) must hold', (n) => any(n).tunnelPathPeer(1, 0, 1, 4500, 3, new Float64Array(3), -1, 0, 1, 1)],
  ['tunnelPathPeer', '(id) is no running data path', (n) => any(n).tunnelPathPeer(987654, 0, 1, 4500, 3, new Float64Array(2), -1, 0, 1, 1)],
  ['tunnelPathSession', '(peerSlot)', (n) => any(n).tunnelPathSession(1, 0, 99, 1, true, 1000)],
  ['tunnelPathSession', '(fast)', (n) => any(n).tunnelPathSession(1, 0, 0, 1, 'yes', 1000)],
  ['tunnelPathNodes', '(nodes) must hold', (n) => any(n).tunnelPathNodes(1, new Float64Array(4))],
  ['tunnelPathNodes', '(nodes) must hold unsigned', (n) => any(n).tunnelPathNodes(1, new Float64Array([-1, 0, 0]))],
  ['tunnelPathFence', '(ttlMs)', (n) => any(n).tunnelPathFence(1, 'soon')],
  ['tunnelPathFence', '(ttlMs) must be a finite number', (n) => any(n).tunnelPathFence(1, Number.NaN)],
  ['tunnelPathFault', '(kind)', (n) => any(n).tunnelPathFault(1, 3)],
  ['tunnelPathFault', '(id) is no running data path', (n) => any(n).tunnelPathFault(987654, 1)],
];

test('every entry point of entries.h is exported, typed and checked here', { skip }, () => {
  const rows = readFileSync(new URL('../../../native/src/entries.h', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => /^STRAIT_ENTRY\((\w+),/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined);
  assert.ok(rows.length >= 21, `entries.h lists ${rows.length} entry points`);
  assert.deepEqual(Object.keys(native()).sort(), [...rows].sort());
  // tlsRelayStats takes no argument (extra arguments are ignored, as JS does): no bad call
  const tested = new Set<string>([...bad.map(([name]) => name), 'tlsRelayStats']);
  for (const name of rows) assert.ok(tested.has(name), `${name} has no bad-argument case here`);
});

test('a missing or wrongly typed argument: a TypeError with STRAIT_ERR_USAGE naming it', { skip }, () => {
  const n = native();
  for (const [name, mention, call] of bad) {
    assert.throws(
      () => call(n),
      (err: unknown) => {
        assert.ok(err instanceof TypeError, `${name}: ${String(err)} is not a TypeError`);
        assert.equal((err as { code?: string }).code, 'STRAIT_ERR_USAGE', `${name}: ${err.message}`);
        assert.ok(err.message.startsWith(`${name}: `), err.message);
        assert.ok(err.message.includes(mention), `${name}: "${err.message}" does not name ${mention}`);
        return true;
      },
      `${name} (${mention}) did not throw`,
    );
  }
});

test('valid calls still work; a failed system call: STRAIT_ERR_SYSTEM_TOOL with the errno', { skip }, () => {
  const n = native();
  const stats = n.tlsRelayStats();
  assert.ok(stats instanceof Float64Array && stats.length === 8);
  assert.equal(n.tlsTrafficKeys(1, secret).length, 16 + 12);
  assert.equal(n.tlsRecordOpen(1, Buffer.alloc(28), 0, buf), null);
  assert.equal(n.pumpStop(-1), -1);
  assert.equal(n.tunnelPathStop(-1), false);
  const sess = n.tunnelSessionNew(key, salt, key, salt, 5);
  assert.equal(n.tunnelSessionCtl(sess, 3, 1), 5);
  assert.equal(n.tunnelSessionCtl(sess, 4, 0), 6);
  assert.equal(n.tunnelOpen(sess, Buffer.alloc(40)), null);
  assert.equal(n.tunnelSessionCtl(sess, 5, 0), 1);
  assert.equal(n.tlsRelayStop(123456789), false);
  const [fd, port] = n.udpOpen('127.0.0.1', 0);
  assert.ok(fd >= 0 && port > 0);
  // to an unused loopback port: the datagram leaves (bytes sent)
  assert.equal(n.udpSend(fd, buf, 0, 10, 0, 0x7f000001, port), 10);
  // a UDP socket has no original destination
  assert.throws(
    () => n.getOriginalDst(fd),
    (err: Error & { code?: string }) => err.code === 'STRAIT_ERR_SYSTEM_TOOL',
  );
  n.udpClose(fd);
  assert.throws(
    () => n.netnsOpen('/nonexistent/netns'),
    (err: Error & { code?: string }) => err.code === 'STRAIT_ERR_SYSTEM_TOOL' && /\(errno 2\)/.test(err.message) && !(err instanceof TypeError),
  );
});
