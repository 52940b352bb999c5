// The world's service proxy (docs/world.md): its nftables table, as kube-proxy's nftables mode
// builds it; the script is checked by the real `nft` in a private network namespace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { renderProxyRules, type ProxyService } from '../../src/world/service-proxy/index.js';

const services = [
  {
    namespace: 'default',
    name: 'echo',
    clusterIP: '100.1.0.11',
    ports: [
      {
        protocol: 'TCP',
        port: 8080,
        endpoints: [
          { ip: '10.1.0.2', port: 8080 },
          { ip: '10.1.1.3', port: 8080 },
        ],
      },
    ],
  },
  { namespace: 'kube-system', name: 'kube-dns', clusterIP: '100.1.0.10', ports: [{ protocol: 'UDP', port: 53, endpoints: [{ ip: '172.18.0.1', port: 53 }] }] },
  { namespace: 'default', name: 'empty', clusterIP: '100.1.0.12', ports: [{ protocol: 'TCP', port: 80, endpoints: [] }] },
] as unknown as ProxyService[];

test('service proxy: verdict map, random endpoint choice, hairpin masquerade, reject without endpoints', () => {
  const text = renderProxyRules(services);
  assert.match(text, /100\.1\.0\.11 \. tcp \. 8080 : goto svc_default_echo_tcp_8080/);
  assert.match(text, /numgen random mod 2 vmap \{ 0 : goto svc_default_echo_tcp_8080_ep0, 1 : goto svc_default_echo_tcp_8080_ep1 \}/);
  assert.match(text, /ip saddr 10\.1\.1\.3 meta mark set meta mark \| 0x4000\n\s+meta l4proto tcp dnat to 10\.1\.1\.3:8080/);
  assert.match(text, /set no-endpoint-services \{\n.*\n\s+elements = \{ 100\.1\.0\.12 \. tcp \. 80 \}/);
  assert.match(text, /^table ip strait-proxy \{\}\ndelete table ip strait-proxy\n/);
});

test('service proxy: nft accepts the script twice (replacement is atomic) and with no services', () => {
  const script = renderProxyRules(services);
  const r = spawnSync(
    'unshare',
    [
      '--net',
      'sh',
      '-c',
      'nft -f - <<EOF\n' + script + 'EOF\nnft -f - <<EOF\n' + script + 'EOF\nnft -f - <<EOF\n' + renderProxyRules([]) + 'EOF\nnft list table ip strait-proxy',
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /100\.1\.0\.11/);
});
