// openpgp.js, loaded on first use: a process that never checks a signature (the code-hosting
// server until someone pushes signed commits or adds a key) does not pay its ~1 s of load
// time and ~10 MB of memory at start.
import type * as OpenPgpModule from 'openpgp';

type OpenPgp = typeof OpenPgpModule;

let loading: Promise<OpenPgp> | undefined;

export function openpgp(): Promise<OpenPgp> {
  loading ??= import('openpgp');
  return loading;
}
