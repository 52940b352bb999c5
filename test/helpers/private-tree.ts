// Run a bash script inside a private namespace tree: its own network, mount and PID
// namespaces (unshare), with a tmpfs on /run so `ip netns add` names stay private.
// Everything the script creates (netns, links, processes) dies with it. The host's
// network namespace is never touched.
import { spawn } from 'node:child_process';

/** A `skip` value for node:test: the tree needs root (CAP_SYS_ADMIN / CAP_NET_ADMIN). */
export const treeSkip: string | false = process.getuid?.() === 0 ? false : 'needs root: network namespaces and TUN devices';

export interface TreeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const PRELUDE = `
set -euo pipefail
mount -t tmpfs strait-run /run
mkdir -p /run/netns
ip link set lo up
`;

export function runInPrivateTree(script: string, opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<TreeResult> {
  return new Promise((resolve) => {
    const child = spawn(
      'unshare',
      ['--net', '--mount', '--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'private', 'bash', '-c', PRELUDE + script],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...opts.env },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Lines of stdout that are JSON objects with a "probe" key, by probe name. */
export function probes(out: string): Map<string, Record<string, unknown>> {
  const m = new Map<string, Record<string, unknown>>();
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (typeof o['probe'] === 'string') m.set(o['probe'], o);
    } catch {
      // not ours
    }
  }
  return m;
}

/**
 * Shell lines for a private tree: a node namespace `s` (192.168.77.2 on veth vs) and, in `k`,
 * a Linux kernel vxlan interface (VNI 100, UDP 4800, 10.99.0.1/24) standing for the cluster's
 * gateway, with 10.99.0.2 (the node side's address) reached through it. A node agent in `s`
 * with gateway 192.168.77.1 and remote subnet 10.99.0.0/24 talks to it.
 */
export const KERNEL_VXLAN_GATEWAY = `ip netns add k; ip netns add s
ip link add vk type veth peer name vs
ip link set vk netns k; ip link set vs netns s
ip -n k link set lo up; ip -n s link set lo up
ip -n k addr add 192.168.77.1/24 dev vk; ip -n k link set vk up
ip -n s addr add 192.168.77.2/24 dev vs; ip -n s link set vs up
ip -n k link add vx0 type vxlan id 100 dstport 4800 remote 192.168.77.2 local 192.168.77.1 dev vk
ip -n k link set vx0 address 02:53:54:00:00:01 mtu 1400
ip -n k addr add 10.99.0.1/24 dev vx0; ip -n k link set vx0 up
# veth leaves the inner checksum to 'hardware' that does not exist on this path: let the
# kernel vxlan fill it in, as a real NIC would
ip netns exec k ethtool -K vx0 tx off >/dev/null
ip -n k neigh add 10.99.0.2 lladdr 02:53:54:00:00:02 dev vx0 nud permanent
`;
