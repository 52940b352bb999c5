// The data plane's TUN devices carry IPv4 only: routeInto leaves them without an IPv6
// link-local address, so the kernel sends no router solicitations or MLD reports into them
// (real clusters showed those read back and counted as malformed / no_route drops at start).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { runInPrivateTree, treeSkip } from '../helpers/private-tree.js';

const mod = join(process.cwd(), 'dist', 'src', 'multicluster', 'dataplane', 'tun', 'index.js');

test('routeInto: the device is up, routed, and has no IPv6 address', { skip: treeSkip }, async () => {
  const r = await runInPrivateTree(`
sysctl -qw net.ipv6.conf.default.disable_ipv6=0 2>/dev/null || true
# the device held open as the daemons hold it (a carrier: the kernel would configure IPv6 now)
node --input-type=module -e "
const m = await import('${mod}');
const t = m.TunDevice.open('strait-t', () => {}, { offload: false });
m.routeInto('strait-t', ['10.2.0.0/16'], { mtu: 1400 });
process.on('SIGTERM', () => { t.close(); process.exit(0); });
setTimeout(() => { t.close(); process.exit(0); }, 60000);
" &
pid=$!
# until routeInto is done (node starts slowly on a busy machine), then 1 s for the kernel to add
# an IPv6 address if it were going to
for i in $(seq 1 300); do ip route show 10.2.0.0/16 | grep -q strait-t && break; sleep 0.1; done
sleep 1
echo "LINK $(ip -o link show dev strait-t | grep -o 'LOWER_UP' | head -1)"
echo "ROUTE $(ip route show 10.2.0.0/16)"
echo "INET6 $(ip -6 -o addr show dev strait-t | wc -l)"
kill $pid
wait
`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /LINK LOWER_UP/, r.stdout);
  assert.match(r.stdout, /ROUTE 10\.2\.0\.0\/16 dev strait-t/);
  assert.match(r.stdout, /INET6 0/, r.stdout);
});
