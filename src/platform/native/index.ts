// Loads strait's C addon (native/, built by `npm run build` with node-gyp against the
// installed Node headers). Only what Node cannot reach lives there.
import { createRequire } from 'node:module';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NativeAddon = Record<string, (...args: any[]) => any>;

let addon: NativeAddon | undefined;

export function native(): NativeAddon {
  if (!addon) {
    const require = createRequire(import.meta.url);
    // dist/src/platform/native/index.js -> native/build/Release
    addon = require('../../../../native/build/Release/strait_native.node') as NativeAddon;
  }
  return addon;
}

/** whether the C addon loads here (the TLS relay is used only then) */
export function tlsOffloadAvailable(): boolean {
  try {
    return typeof native()['tlsRelayStart'] === 'function';
  } catch {
    return false;
  }
}

export { TlsTap, tlsOffloadCounters, type ArmOptions, type TlsOffloadCounters } from './tls-relay.js';
