// Gateway HA in the daemon: the lease (src/control/gateway-ha, through the world's store
// API) and the liveness link. The active gateway listens on TCP `ha.port` of its underlay
// address; the passive one holds a connection to it. When the active process dies the
// kernel closes that connection at once, and the passive one takes the lease without
// waiting for it to expire (a frozen or cut-off active one is caught by the expiry).
// Loaded with import() only when `ha` is configured, so a single gateway never loads the
// store client.
import { readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Gateway } from '../../src/dataplane/gateway/index.js';
import { LeaseElector } from '../../src/control/gateway-ha/index.js';
import { connectStore } from '../../src/control/store/api/index.js';

export interface GatewayHa {
  elector: LeaseElector;
  stop(): Promise<void>;
}

type Log = (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;

export async function startGatewayHa(gw: Gateway, log: Log, onLost: () => void): Promise<GatewayHa> {
  const ha = gw.config.ha;
  if (!ha) throw new Error('startGatewayHa without ha config');
  const me = gw.config.name;
  const self = ha.members.find((m) => m.name === me);
  const token = readFileSync(ha.store.tokenFile, 'utf8').trim();
  const store = connectStore({ socketPath: ha.store.socket, token, cluster: ha.store.cluster });
  // the liveness link: listen before taking part in the election
  const clients = new Set<Socket>();
  const server: Server = createServer((s) => {
    clients.add(s);
    s.on('error', () => undefined).on('close', () => clients.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ha.port, self?.address ?? gw.config.vxlan.listen, () => resolve());
  });
  let link: Socket | undefined;
  let linkTo: string | undefined;
  let stopped = false;
  const follow = (holder: string | undefined): void => {
    if (stopped || elector.isActive || !holder || holder === me) return;
    if (link && linkTo === holder) return;
    link?.destroy();
    const m = ha.members.find((x) => x.name === holder);
    if (!m) return;
    linkTo = holder;
    const s = connect({ host: m.address, port: ha.port });
    link = s;
    let established = false;
    s.setNoDelay(true);
    s.on('connect', () => { established = true; });
    s.on('error', () => undefined);
    s.on('close', () => {
      if (link === s) { link = undefined; linkTo = undefined; }
      if (stopped || elector.isActive) return;
      if (established) {
        log('warn', `liveness link to the active gateway ${holder} closed: taking the lease over`, { holder });
        void elector.takeOver(holder).then((won) => { if (!won) follow(elector.holder); });
      } else {
        // not listening (yet): try again soon; the lease expiry decides meanwhile
        setTimeout(() => follow(elector.holder), 200).unref();
      }
    });
  };
  const elector: LeaseElector = new LeaseElector({
    store, namespace: ha.leaseNamespace, name: ha.leaseName, identity: me,
    leaseDurationMs: ha.leaseDurationMs, renewMs: ha.renewMs,
    // the first member creates the lease; the other only when it stays missing
    createDelayMs: ha.members[0]?.name === me ? 0 : ha.leaseDurationMs,
    onActive: (epoch, why) => {
      link?.destroy();
      gw.becomeActive(epoch);
      log('info', `holding the lease ${ha.leaseNamespace}/${ha.leaseName}: active (epoch ${epoch}; ${why})`, { haStatus: 'active', epoch, why });
    },
    onPassive: (holder, epoch) => {
      gw.becomePassive(ha.members.find((m) => m.name === holder)?.address);
      log('info', `lease held by ${holder ?? 'nobody'}: passive (epoch ${epoch})`, { haStatus: 'passive', holder, epoch });
      follow(holder);
    },
    onLost: (holder) => {
      log('error', `lost the lease to ${holder ?? 'nobody'} while active: exiting to restart as passive`, { holder });
      onLost();
    },
    onRenewed: (at) => gw.leaseHeld(at + ha.leaseDurationMs),
    onError: (err) => log('warn', `lease: ${String(err)}`),
  });
  elector.start();
  return {
    elector,
    async stop() {
      stopped = true;
      link?.destroy();
      await elector.release();
      for (const c of clients) c.destroy();
      server.close();
      await store.close();
    },
  };
}
