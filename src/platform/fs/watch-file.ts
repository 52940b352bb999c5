// Follow one file for changes: its directory is watched, not the file, because writers replace
// it (an atomic rename, `strait join`'s PSK file) and Kubernetes volumes swap a `..data` symlink
// (ConfigMap and Secret mounts), either of which leaves a watch on the old inode. Events come
// debounced: one call per burst.
import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface FileWatch {
  close(): void;
}

/** Call `onChange` once per burst of changes to `file` (or a volume's `..` entries); throws when the directory cannot be watched. */
export function watchFile(file: string, onChange: () => void, debounceMs = 10): FileWatch {
  const name = basename(file);
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(file), (_event, changed) => {
    if (changed !== null && changed !== name && !String(changed).startsWith('..')) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
