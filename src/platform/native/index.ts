// strait's C addon (native/, built by `npm run build` with node-gyp against the installed
// Node headers) and what is built on it: the loader and its typed face (addon.ts), the TLS
// record relay's tap (tls-relay.ts).
export { native, tlsOffloadAvailable, type NativeAddon } from './addon.js';
export { TlsTap, tlsOffloadCounters, type ArmOptions, type TlsOffloadCounters } from './tls-relay.js';
