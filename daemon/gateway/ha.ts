// Gateway HA in the daemon: the lease (src/multicluster/control/gateway-ha) and the liveness link.
//
// Two stores: the world's store API (`ha.store`: socket + token), or, in Kubernetes mode
// (STRAIT_STORE=kubernetes or `ha.kubernetes.kubeconfig`), the API server itself: a real
// coordination.k8s.io/v1 Lease in the pod's namespace (STRAIT_POD_NAMESPACE, default
// submariner-operator) with client-go's leader-election timings (15 s / 10 s / 2 s by
// default), created with POST (409 = another candidate created it) and renewed with
// resourceVersion-guarded PUTs (409 = lost the race). In Kubernetes mode the gateway also
// publishes its own Endpoint and Gateway records in that namespace (in the world the
// multicluster daemon does, from /records).
//
// The liveness link (when `ha.members` lists both gateways): the active gateway listens on
// TCP `ha.port` of its underlay address; the passive one holds a connection to it. When
// the active process dies the kernel closes that connection at once, and the passive one
// takes the lease without waiting for it to expire (a frozen or cut-off active one is
// caught by the expiry).
//
// Records on a change of holder: the gateway that takes the lease over marks the former
// holder's Gateway record `passive` ("Lost the lease to ...: not reachable") and removes
// its Endpoint, so `strait show gateways` never keeps two active gateways while the former
// one is dead or frozen; a gateway that finds it lost the lease (resumed after SIGSTOP)
// is fenced already (its lease deadline passed), marks its own record `passive`, and exits
// to be restarted passive.
//
// Loaded with import() only when `ha` is configured, so a single gateway never loads the
// store client.
import { readFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { E } from '../../src/base/errors/index.js';
import type { Gateway } from '../../src/multicluster/dataplane/gateway/index.js';
import { LEASE_KIND, LeaseElector, type LeaseSpec } from '../../src/multicluster/control/gateway-ha/index.js';
import { markGatewayPassive, OPERATOR_NAMESPACE, startRecordsPublisher } from '../../src/multicluster/control/clusterset/index.js';
import { connectStore, openKubernetesStore, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { startListening } from '../../src/base/net/index.js';

export interface GatewayHa {
  elector: LeaseElector;
  /** 'world' (the store API) or 'kubernetes' (the API server) */
  mode: 'world' | 'kubernetes';
  /** where the Lease and (Kubernetes mode) the records are */
  namespace: string;
  stop(): Promise<void>;
}

type Log = (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | undefined> =>
  Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);

export async function startGatewayHa(gw: Gateway, log: Log, onLost: () => void, env: NodeJS.ProcessEnv = process.env): Promise<GatewayHa> {
  const ha = gw.config.ha;
  if (!ha) throw new Error('startGatewayHa without ha config');
  const me = gw.config.name;
  const self = ha.members.find((m) => m.name === me);
  const kubernetes = env['STRAIT_STORE'] === 'kubernetes' || typeof ha.kubernetes.kubeconfig === 'string';
  let store: ResourceStore;
  let namespace: string;
  let recordsNamespace: string;
  let timing: { leaseDurationMs: number; renewMs: number; renewDeadlineMs?: number };
  let create: ((lease: KubeObject<LeaseSpec>) => Promise<boolean>) | undefined;
  if (kubernetes) {
    const k = ha.kubernetes;
    const kube = openKubernetesStore(typeof k.kubeconfig === 'string' ? { kubeConfigPath: k.kubeconfig } : {});
    store = kube;
    namespace = env['STRAIT_POD_NAMESPACE'] || OPERATOR_NAMESPACE;
    recordsNamespace = namespace;
    timing = { leaseDurationMs: k.leaseDurationSeconds * 1000, renewMs: k.retryPeriodSeconds * 1000, renewDeadlineMs: k.renewDeadlineSeconds * 1000 };
    create = async (lease) => {
      const r = await kube.raw({ method: 'POST', path: `/apis/${LEASE_KIND.apiVersion}/namespaces/${encodeURIComponent(namespace)}/leases`, body: lease }, [409]);
      return r.status !== 409;
    };
  } else {
    if (!ha.store) throw E.configInvalid('gateway config: ha.store', null, 'set ha.store (the world\'s store socket, token file and cluster), or run in Kubernetes mode (STRAIT_STORE=kubernetes or ha.kubernetes.kubeconfig)');
    const token = readFileSync(ha.store.tokenFile, 'utf8').trim();
    store = connectStore({ socketPath: ha.store.socket, token, cluster: ha.store.cluster });
    namespace = ha.leaseNamespace;
    recordsNamespace = OPERATOR_NAMESPACE;
    timing = { leaseDurationMs: ha.leaseDurationMs, renewMs: ha.renewMs };
  }
  const clusterId = gw.config.clusterId;
  const mark = (node: string, summary: string): Promise<boolean> => markGatewayPassive(store, { node, clusterId, summary, namespace: recordsNamespace });

  // the liveness link: listen before taking part in the election (only with both members known)
  const clients = new Set<Socket>();
  let server: Server | undefined;
  if (self) {
    const srv = createServer((s) => {
      clients.add(s);
      s.on('error', () => undefined).on('close', () => clients.delete(s));
    });
    server = srv;
    await startListening(srv, { port: ha.port, host: self.address });
  }
  let link: Socket | undefined;
  let linkTo: string | undefined;
  let stopped = false;
  const follow = (holder: string | undefined): void => {
    if (stopped || !server || elector.isActive || !holder || holder === me) return;
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

  // the former holder's record: marked at the takeover, and looked at again a little later
  // (a publisher that fetched its records just before it died may have written them since)
  const recheck = new Set<NodeJS.Timeout>();
  const markFormer = (former: string, why: string, again: number): void => {
    if (stopped || !elector.isActive) return;
    const summary = `Lost the lease to ${me} (${why}): not reachable`;
    mark(former, summary).then(
      (found) => { if (found) log('info', `marked the former active gateway ${former} passive`, { former }); },
      (err: unknown) => log('warn', `marking the former active gateway ${former} passive failed: ${String(err)}`, { former }),
    );
    if (again > 0) {
      const t = setTimeout(() => { recheck.delete(t); markFormer(former, why, again - 1); }, Math.max(1000, timing.renewMs * 5));
      t.unref();
      recheck.add(t);
    }
  };

  const elector: LeaseElector = new LeaseElector({
    store, namespace, name: ha.leaseName, identity: me,
    leaseDurationMs: timing.leaseDurationMs, renewMs: timing.renewMs,
    ...(timing.renewDeadlineMs !== undefined ? { renewDeadlineMs: timing.renewDeadlineMs } : {}),
    ...(create ? { create, ensureNamespace: false } : {}),
    // the first member creates the lease; the other only when it stays missing (an atomic create needs no delay)
    createDelayMs: create || ha.members.length === 0 || ha.members[0]?.name === me ? 0 : timing.leaseDurationMs,
    onActive: (epoch, why, former) => {
      link?.destroy();
      gw.becomeActive(epoch);
      log('info', `holding the lease ${namespace}/${ha.leaseName}: active (epoch ${epoch}; ${why})`, { haStatus: 'active', epoch, why, ...(former ? { former } : {}) });
      if (former && former !== me) markFormer(former, why, 2);
    },
    onPassive: (holder, epoch) => {
      gw.becomePassive(ha.members.find((m) => m.name === holder)?.address, epoch);
      log('info', `lease held by ${holder ?? 'nobody'}: passive (epoch ${epoch})`, { haStatus: 'passive', holder, epoch });
      follow(holder);
    },
    onLost: (holder, why) => {
      // fenced already (the deadline passed) or fenced now: nothing more goes into the tunnel
      gw.leaseHeld(performance.now() - 1);
      const reason = why ?? `lost the lease to ${holder ?? 'nobody'} while active`;
      log('error', `${reason}: fenced, exiting to restart as passive`, { holder });
      const summary = holder ? `Lost the lease to ${holder}: fenced, sending nothing into the tunnel` : `Could not renew the lease (${reason}): fenced, sending nothing into the tunnel`;
      void withTimeout(mark(me, summary).catch(() => false), 1000).then(() => onLost());
    },
    onRenewed: (at) => gw.leaseHeld(at + (timing.renewDeadlineMs ?? timing.leaseDurationMs)),
    onError: (err) => log('warn', `lease: ${String(err)}`),
  });
  elector.start();

  // Kubernetes mode: this gateway publishes its own records (Endpoint, Gateway) in its namespace
  const publisher = kubernetes
    ? startRecordsPublisher({
      local: store, namespace: recordsNamespace, intervalMs: timing.renewMs, shape: 'submariner',
      fetchRecords: () => Promise.resolve({ endpoint: gw.endpointRecord(), gateway: gw.gatewayRecord(), connections: gw.connectionRecords() as unknown as Record<string, unknown>[] }),
      onError: (err) => log('warn', `publishing the gateway records failed: ${String(err)}`),
    })
    : undefined;
  return {
    elector,
    mode: kubernetes ? 'kubernetes' : 'world',
    namespace,
    async stop() {
      stopped = true;
      for (const t of recheck) clearTimeout(t);
      // a tick in flight may have read the record `active`: it lands before the mark below
      const publishing = publisher?.stop();
      link?.destroy();
      // a planned stop: the record says so (nobody else would: the other one takes a released lease)
      const wasActive = elector.isActive;
      await elector.release();
      if (publishing) await withTimeout(publishing, 2000);
      if (wasActive) await withTimeout(mark(me, 'Released the lease (stopped)').catch(() => false), 1000);
      for (const c of clients) c.destroy();
      server?.close();
      await store.close();
    },
  };
}
