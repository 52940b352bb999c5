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
