// How strait runs its long-lived Node processes in the local world: small fixed costs per process, since a
// world of N clusters runs some 3N of them (docs/world.md, Boot time and memory).
//   - V8's young generation grows to 16 MiB per semi-space (two of them) in a process that
//     once allocated fast (start-up, a burst of watch events); those pages stay resident and
//     are never given back. A daemon here keeps a few MiB of short-lived objects at a time:
//     1 MiB semi-spaces cost some more scavenges in a burst, and 10-30 MiB less per process.
//   - glibc makes a malloc arena per thread that allocates (V8's GC and compiler threads,
//     libuv's pool): each keeps its freed pages. Two arenas are enough for a process whose
//     JavaScript runs on one thread.

/** V8 flags of every long-lived Node daemon of the world (the supervisor, components) */
export const DAEMON_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=1']);

/** environment of every process of the world */
export const DAEMON_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: '2' });

/**
 * A component's command with the daemon flags, when it runs Node (its first word is this
 * Node) and does not size its young generation itself.
 */
export function withDaemonFlags(command: readonly string[]): string[] {
  const [node, ...rest] = command;
  if (node !== process.execPath || rest.some((a) => a.startsWith('--max-semi-space-size'))) return [...command];
  return [node, ...DAEMON_NODE_FLAGS, ...rest];
}
