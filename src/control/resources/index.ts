export { Kinds, type KindInfo, type KindName } from './kinds.js';
export { GROUPS, GPG_KEYS_CM, INJECT_KEY } from './groups.js';
