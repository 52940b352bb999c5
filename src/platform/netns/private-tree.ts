// The private namespace tree a world lives in: new pid, mount and network namespaces
// (and a user namespace when not root), owned by the process that starts it. When that
// process dies for any reason, the kernel kills the tree's pid 1, every process of the
// pid namespace dies, and with them every network namespace, veth and bridge: the
// host's `ip netns list` and `ip link` never see any of it.
import { existsSync, readFileSync } from 'node:fs';

export interface PrivateTreeOptions {
  /** add --user --map-root-user (needed when not root) */
  userNamespace: boolean;
  /**
   * true: the tree dies with the process that spawns it (setpriv --pdeathsig KILL);
   * false: unshare itself is the owner (a detached world: kill it and the tree is gone)
   */
  dieWithParent?: boolean;
}

/** argv that runs `command` as pid 1 of a fresh private tree. */
export function privateTreeCommand(command: string[], opts: PrivateTreeOptions): string[] {
  return [
    // if the starting process dies (even kill -9), unshare gets SIGKILL ...
    ...(opts.dieWithParent === false ? [] : ['setpriv', '--pdeathsig', 'KILL']),
    // ... and --kill-child passes it on to pid 1 of the new pid namespace
    'unshare',
    '--pid',
    '--fork',
    '--kill-child',
    '--mount',
    '--net',
    '--propagation',
    'private',
    ...(opts.userNamespace ? ['--user', '--map-root-user'] : []),
    ...command,
  ];
}

/** Whether an unprivileged user may create user namespaces on this kernel. */
export function canUseUserNamespaces(): { ok: boolean; reason?: string } {
  const read = (p: string): string | undefined => {
    try {
      return existsSync(p) ? readFileSync(p, 'utf8').trim() : undefined;
    } catch {
      return undefined;
    }
  };
  const max = read('/proc/sys/user/max_user_namespaces');
  if (max === '0') return { ok: false, reason: 'user.max_user_namespaces is 0' };
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0') return { ok: false, reason: 'kernel.unprivileged_userns_clone is 0' };
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return { ok: false, reason: 'kernel.apparmor_restrict_unprivileged_userns is 1' };
  }
  return { ok: true };
}
