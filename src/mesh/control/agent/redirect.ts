// The pod's nftables redirect (podRedirectScript), installed and removed inside the pod's
// network namespace; shared by both ways of running the pods' proxies.
import { execFileSync } from 'node:child_process';
import { E } from '../../../base/errors/index.js';

/** Load the script in the pod's namespace; throws STRAIT_ERR_SYSTEM_TOOL with nft's stderr. */
export function installRedirect(netns: string, script: string): void {
  try {
    execFileSync('ip', ['netns', 'exec', netns, 'nft', '-f', '-'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as { status?: number | null; stderr?: Buffer; message?: string };
    throw E.systemTool(`ip netns exec ${netns} nft -f -`, e.status ?? 'spawn', String(e.stderr ?? e.message ?? err).trim());
  }
}

/** Remove strait's table from the pod's namespace (nothing when the namespace is gone). */
export function removeRedirect(netns: string): void {
  try {
    execFileSync('ip', ['netns', 'exec', netns, 'nft', 'delete', 'table', 'ip', 'strait_sidecar'], { stdio: 'ignore' });
  } catch {
    // the pod's namespace is gone already
  }
}
