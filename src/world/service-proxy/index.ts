// The node's service proxy: real nftables DNAT from ClusterIP:port to endpoints.
import { nftApply } from '../../platform/netns/index.js';
import { renderProxyRules, PROXY_TABLE, type ProxyService, type ProxyServicePort, type ProxyEndpoint } from './render.js';

export { renderProxyRules, PROXY_TABLE, type ProxyService, type ProxyServicePort, type ProxyEndpoint };

/** Replace the proxy table of a node's namespace with exactly these services. */
export async function syncServiceProxy(netns: string, services: ProxyService[]): Promise<void> {
  await nftApply(netns, renderProxyRules(services));
}
