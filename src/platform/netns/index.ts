// Network namespace mechanics for the local world: ip/nft/sysctl inside named
// namespaces, sockets made inside them, and the private namespace tree the world lives in.
export { run, ipBatch, inNetns, setSysctls, nftApply, netnsPath, NETNS_DIR, type RunOptions } from './run.js';
export { privateTreeCommand, canUseUserNamespaces, type PrivateTreeOptions } from './private-tree.js';
export { inNetnsSync, listenInNetns, openNetns, closeNetns, socketInNetns, connectInNetns } from './listen.js';
