// An exclusive advisory lock (flock(2), through the C addon: Node has none) on an open file.
import { native } from '../native/index.js';

/**
 * Take an exclusive lock on `fd`'s open file description without waiting: true when taken,
 * false when another open description of the file holds it. The lock is shared by every
 * process that holds a descriptor of this description (a child given `fd` in its stdio) and
 * the kernel drops it when the last of them closes it or dies, SIGKILL included.
 */
export function tryLockFile(fd: number): boolean {
  return native().flockTry(fd);
}
