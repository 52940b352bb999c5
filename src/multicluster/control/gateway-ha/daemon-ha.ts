// Gateway HA in the gateway daemon: the lease (lease.ts) and the liveness link.
//
// Two stores: the world's store API (`ha.store`: socket + token), or, in Kubernetes mode
// (STRAIT_STORE=kubernetes or `ha.kubernetes.kubeconfig`), the API server itself: a real
// coordination.k8s.io/v1 Lease in the pod's namespace (STRAIT_POD_NAMESPACE, default
// submariner-operator) with client-go's leader-election timings (15 s / 10 s / 2 s by
// default), created with POST (409 = another candidate created it) and renewed with
// resourceVersion-guarded PUTs (409 = lost the race). In Kubernetes mode the gateway also
// publishes its own Endpoint and Gateway records, in Submariner's shape, in the operator
// namespace (submariner-operator, where Submariner's tools read them; STRAIT_OPERATOR_NAMESPACE
// changes it), keeps the Submariner resource's status.gateways current, and, once the
// cluster has joined, puts its Endpoint on the broker and copies the other clusters' from
// there (in the world the multicluster daemon does all this, from /records).
//
// The liveness link (when `ha.members` lists both gateways, or in Kubernetes mode without
// `ha.members`: the nodes labelled submariner.io/gateway=true, by name and InternalIP, followed
// by a watch): the active gateway listens on TCP `ha.port` of its underlay address; the
// passive one holds a connection to it. When the active process dies (kill -9, a crash) the
// kernel closes that connection at once, and the passive one takes the lease without waiting
// for it to expire (a frozen or cut-off active one, whose connection stays open, is caught by
// the expiry). `ha.liveness: false` turns it off (the lease expiry alone decides).
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
import { E } from '../../../base/errors/index.js';
import { listenServer } from '../../../base/net/index.js';
import { haInKubernetes, type Gateway, type GatewayHaConfig } from '../../dataplane/gateway/index.js';
import { LEASE_KIND, LeaseElector, type LeaseSpec } from './lease.js';
import { watchGatewayNodes } from '../cluster-nodes/index.js';
import {
  gatewayClusterOf,
  markGatewayPassive,
  MC_KINDS,
  openBrokerOfCluster,
  OPERATOR_NAMESPACE,
  readGateway,
  startRecordsPublisher,
} from '../clusterset/index.js';
import { VERSION } from '../../../platform/cli-kit/index.js';
import { connectStore, openKubernetesStore, type KubeObject, type ResourceStore } from '../../../platform/store/index.js';

export interface GatewayHa {
  elector: LeaseElector;
  /** 'world' (the store API) or 'kubernetes' (the API server) */
  mode: 'world' | 'kubernetes';
  /** where the Lease is */
  namespace: string;
  /** where the Gateway (and, when active, Endpoint) records are */
  recordsNamespace: string;
  /**
   * The lease released (or left to a successor on this node), then `afterLease` (the daemon
   * stops its data path there: a successor waiting for the node's ports gets them at once),
   * then the records and the stores closed.
   */
  stop(afterLease?: () => Promise<void>): Promise<void>;
}

/** what the active gateway says on the liveness link when its successor on the node takes the lease over */
const HANDOVER_WORD = 'handover';

/** how often the active gateway reads the cluster's Gateway records for rivals (after a successful renewal: every one, 2 s) */
const RIVALS_READ_MS = 1000;

type Log = (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T | undefined> =>
  Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);

/** Lease timings: client-go's in Kubernetes mode, the config's in the world. */
interface LeaseTiming {
  leaseDurationMs: number;
  renewMs: number;
  renewDeadlineMs?: number;
}

/** Where the lease and the records are, and how the lease is created there. */
interface LeaseStore {
  store: ResourceStore;
  kubernetes: boolean;
  namespace: string;
  recordsNamespace: string;
  timing: LeaseTiming;
  /** an atomic create (POST; 409 = another candidate created it), in Kubernetes mode */
  create?: (lease: KubeObject<LeaseSpec>) => Promise<boolean>;
}

function openLeaseStore(ha: GatewayHaConfig, env: NodeJS.ProcessEnv): LeaseStore {
  const kubernetes = haInKubernetes(ha.kubernetes.kubeconfig, env);
  if (kubernetes) {
    const k = ha.kubernetes;
    const kube = openKubernetesStore(typeof k.kubeconfig === 'string' ? { kubeConfigPath: k.kubeconfig } : {});
    const namespace = env['STRAIT_POD_NAMESPACE'] || OPERATOR_NAMESPACE;
    return {
      store: kube,
      kubernetes,
      namespace,
      recordsNamespace: OPERATOR_NAMESPACE,
      timing: { leaseDurationMs: k.leaseDurationSeconds * 1000, renewMs: k.retryPeriodSeconds * 1000, renewDeadlineMs: k.renewDeadlineSeconds * 1000 },
      create: async (lease) => {
        const r = await kube.raw(
          { method: 'POST', path: `/apis/${LEASE_KIND.apiVersion}/namespaces/${encodeURIComponent(namespace)}/leases`, body: lease },
          [409],
        );
        return r.status !== 409;
      },
    };
  }
  if (!ha.store)
    throw E.configInvalid(
      'gateway config: ha.store',
      null,
      "set ha.store (the world's store socket, token file and cluster), or run in Kubernetes mode (STRAIT_STORE=kubernetes or ha.kubernetes.kubeconfig)",
    );
  const token = readFileSync(ha.store.tokenFile, 'utf8').trim();
  return {
    store: connectStore({ socketPath: ha.store.socket, token, cluster: ha.store.cluster }),
    kubernetes,
    namespace: ha.leaseNamespace,
    recordsNamespace: OPERATOR_NAMESPACE,
    timing: { leaseDurationMs: ha.leaseDurationMs, renewMs: ha.renewMs },
  };
}

/** The liveness link's listening side: listen before taking part in the election (only with both members known). */
async function listenLiveness(port: number, address: string): Promise<{ server: Server; clients: Set<Socket> }> {
  const clients = new Set<Socket>();
  const server = createServer((s) => {
    clients.add(s);
    s.on('error', () => undefined).on('close', () => clients.delete(s));
  });
  await listenServer(server, { port, host: address });
  return { server, clients };
}

/**
 * One gateway's part in the election: the lease elector, the liveness link to the holder
 * while passive, and the Gateway records it marks when the holder changes.
 */
class HaMember {
  readonly elector: LeaseElector;
  private readonly me: string;
  private link: Socket | undefined;
  private linkTo: string | undefined;
  private stopped = false;
  private readonly recheck = new Set<NodeJS.Timeout>();

  constructor(
    private readonly gw: Gateway,
    private readonly ha: GatewayHaConfig,
    private readonly lease: LeaseStore,
    private liveness: { server: Server; clients: Set<Socket> } | undefined,
    private readonly log: Log,
    onLost: () => void,
    /** a member's underlay address by name: `ha.members`, else the gateway nodes' (Kubernetes mode) */
    private readonly addressOf: (name: string) => string | undefined = (name) => ha.members.find((m) => m.name === name)?.address,
    /** the link is on: this gateway listens (now or once its address is known) and, while passive, follows the holder */
    private readonly linkOn = liveness !== undefined,
  ) {
    const me = gw.config.name;
    const { timing, create } = lease;
    this.me = me;
    this.elector = new LeaseElector({
      store: lease.store,
      namespace: lease.namespace,
      name: ha.leaseName,
      identity: me,
      leaseDurationMs: timing.leaseDurationMs,
      renewMs: timing.renewMs,
      ...(timing.renewDeadlineMs !== undefined ? { renewDeadlineMs: timing.renewDeadlineMs } : {}),
      ...(create ? { create, ensureNamespace: false } : {}),
      // the first member creates the lease; the other only when it stays missing (an atomic create needs no delay)
      createDelayMs: create || ha.members.length === 0 || ha.members[0]?.name === me ? 0 : timing.leaseDurationMs,
      onActive: (epoch, why, former) => this.onActive(epoch, why, former),
      onPassive: (holder, epoch) => this.onPassive(holder, epoch),
      onLost: (holder, why) => this.onLost(holder, why, onLost),
      // the data plane fences itself at the deadline unless told otherwise: a rival that
      // appeared since the last read of the records is not trusted to be absent
      onRenewed: (at) => {
        gw.leaseHeld(at + (timing.renewDeadlineMs ?? timing.leaseDurationMs));
        if (timing.renewDeadlineMs !== undefined) this.refreshRivals();
      },
      rivals: () => this.rivals(),
      // a cluster's one gateway past the deadline: no fence (0), nobody could take the lease
      onKeptAlone: (ms) => {
        gw.leaseHeld(0);
        log(
          'warn',
          `the lease was not renewed for ${Math.round(ms)} ms (the API server does not answer) and no other gateway of the cluster is known: still active, the tunnels keep forwarding (nobody can take the lease over)`,
        );
      },
      onError: (err) => log('warn', `lease: ${String(err)}`),
    });
  }

  /** other gateways of this cluster as of the last successful read: undefined before the first */
  private rivalNodes: string[] | undefined;
  private rivalsReadAt = -Infinity;
  private rivalsReading = false;

  /**
   * Could another candidate take the lease: a second member configured, or another
   * gateway's record in the cluster (a passive gateway publishes its own; a stale one of a
   * removed node counts too: the safe side). Unknown (not read yet): yes.
   */
  private rivals(): boolean {
    if (this.ha.members.some((m) => m.name !== this.me)) return true;
    return this.rivalNodes === undefined || this.rivalNodes.length > 0;
  }

  /** Read the cluster's Gateway records again (at most every RIVALS_READ_MS, after a renewal: the API answers). */
  private refreshRivals(): void {
    if (this.rivalsReading || performance.now() - this.rivalsReadAt < RIVALS_READ_MS) return;
    this.rivalsReading = true;
    const own = this.gw.config.clusterId;
    this.lease.store
      .list(MC_KINDS.Gateway, { namespace: this.lease.recordsNamespace })
      .then(
        (l) => {
          this.rivalsReadAt = performance.now();
          const others = l.items
            .filter((o) => ['', own].includes(gatewayClusterOf(o)))
            .map((o) => readGateway(o).gateway.node)
            .filter((n) => n !== this.me);
          if (others.join() !== (this.rivalNodes ?? []).join() || this.rivalNodes === undefined)
            this.log('info', `other gateways of the cluster: ${others.join(', ') || 'none'}`, { rivals: others });
          this.rivalNodes = others;
        },
        (err: unknown) => this.log('warn', `reading the cluster's Gateway records failed: ${String(err)}`),
      )
      .finally(() => {
        this.rivalsReading = false;
      });
  }

  /** Mark a gateway's record passive, with why. */
  mark(node: string, summary: string): Promise<boolean> {
    return markGatewayPassive(this.lease.store, { node, clusterId: this.gw.config.clusterId, summary, namespace: this.lease.recordsNamespace });
  }

  private onActive(epoch: number, why: string, former: string | undefined): void {
    this.link?.destroy();
    this.gw.becomeActive(epoch);
    this.log('info', `holding the lease ${this.lease.namespace}/${this.ha.leaseName}: active (epoch ${epoch}; ${why})`, {
      haStatus: 'active',
      epoch,
      why,
      ...(former ? { former } : {}),
    });
    if (former && former !== this.me) this.markFormer(former, why, 2);
  }

  private onPassive(holder: string | undefined, epoch: number): void {
    this.gw.becomePassive(holder ? this.addressOf(holder) : undefined, epoch);
    this.log('info', `lease held by ${holder ?? 'nobody'}: passive (epoch ${epoch})`, { haStatus: 'passive', holder, epoch });
    this.follow(holder);
  }

  private onLost(holder: string | undefined, why: string | undefined, exit: () => void): void {
    // fenced already (the deadline passed) or fenced now: nothing more goes into the tunnel
    this.gw.leaseHeld(performance.now() - 1);
    // the peers hear it (twice: a datagram may be lost) and say `peer fenced`, not a loss
    this.gw.noticeFenced();
    setTimeout(() => this.gw.noticeFenced(), 200).unref();
    const reason = why ?? `lost the lease to ${holder ?? 'nobody'} while active`;
    this.log('error', `${reason}: fenced, exiting to restart as passive`, { holder });
    const summary = holder
      ? `Lost the lease to ${holder}: fenced, sending nothing into the tunnel`
      : `Could not renew the lease (${reason}): fenced, sending nothing into the tunnel`;
    void withTimeout(
      this.mark(this.me, summary).catch(() => false),
      1000,
    ).then(() => exit());
  }

  /** While passive: hold a connection to the holder's liveness port; its close means the holder died. */
  private follow(holder: string | undefined): void {
    const elector = this.elector;
    if (this.stopped || !this.linkOn || elector.isActive || !holder || holder === this.me) return;
    if (this.link && this.linkTo === holder) return;
    this.link?.destroy();
    const address = this.addressOf(holder);
    if (!address) return;
    this.linkTo = holder;
    const s = connect({ host: address, port: this.ha.port });
    this.link = s;
    let established = false;
    /** the holder said it leaves the lease to its successor on its node (a rolling update) */
    let handingOver = false;
    /** the last bytes read (the word may come split over two reads) */
    let heard = '';
    s.setNoDelay(true);
    s.on('connect', () => {
      established = true;
    });
    s.on('data', (d: Buffer) => {
      heard = (heard + d.toString()).slice(-2 * HANDOVER_WORD.length);
      if (heard.includes(HANDOVER_WORD)) handingOver = true;
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      if (this.link === s) {
        this.link = undefined;
        this.linkTo = undefined;
      }
      if (this.stopped || elector.isActive) return;
      if (established && handingOver) {
        // its successor renews the lease and listens here again; if none comes, the lease expires
        this.log('info', `the active gateway ${holder} hands the lease over to its successor on the same node (a rolling update): following it`, {
          holder,
        });
        setTimeout(() => this.follow(elector.holder), 200).unref();
      } else if (established) {
        this.log('warn', `liveness link to the active gateway ${holder} closed: taking the lease over`, { holder });
        void elector.takeOver(holder).then((won) => {
          if (!won) this.follow(elector.holder);
        });
      } else {
        // not listening (yet): try again soon; the lease expiry decides meanwhile
        setTimeout(() => this.follow(elector.holder), 200).unref();
      }
    });
  }

  /**
   * The former holder's record: marked at the takeover, and looked at again a little later
   * (a publisher that fetched its records just before it died may have written them since).
   */
  private markFormer(former: string, why: string, again: number): void {
    if (this.stopped || !this.elector.isActive) return;
    const summary = `Lost the lease to ${this.me} (${why}): not reachable`;
    this.mark(former, summary).then(
      (found) => {
        if (found) this.log('info', `marked the former active gateway ${former} passive`, { former });
      },
      (err: unknown) => this.log('warn', `marking the former active gateway ${former} passive failed: ${String(err)}`, { former }),
    );
    if (again > 0) {
      const t = setTimeout(
        () => {
          this.recheck.delete(t);
          this.markFormer(former, why, again - 1);
        },
        Math.max(1000, this.lease.timing.renewMs * 5),
      );
      t.unref();
      this.recheck.add(t);
    }
  }

  /** The listening side, once this gateway's own address is known (Kubernetes mode: from its Node object). */
  setLiveness(l: { server: Server; clients: Set<Socket> }): void {
    if (this.stopped) {
      l.server.close();
      return;
    }
    this.liveness = l;
  }

  /** Members' addresses changed: follow the holder if its address was not known before. */
  refollow(): void {
    if (!this.elector.isActive) this.follow(this.elector.holder);
  }

  /** No more following or marking; the liveness link closed. */
  stop(): void {
    this.stopped = true;
    for (const t of this.recheck) clearTimeout(t);
    this.link?.destroy();
  }

  /**
   * A planned stop (after stop()): the lease released and the record saying so (nobody else
   * would: the other gateway takes a released lease), `publishing` (the records publisher's
   * last tick) landed first; the liveness link closed.
   */
  async leave(
    publishing: Promise<void> | undefined,
    successorWaiting: () => Promise<boolean>,
    log: Log,
    afterLease: () => Promise<void> = () => Promise.resolve(),
  ): Promise<void> {
    const elector = this.elector;
    const wasActive = elector.isActive;
    // ... unless a successor on this node takes it over: the lease stays this node's (the
    // successor finds it "held by this node before a restart"), the passive gateway is told
    // not to take it when the link closes, and the record stays active
    const handingOver = wasActive && (await successorWaiting().catch(() => false));
    if (handingOver) {
      elector.stop();
      for (const c of this.liveness?.clients ?? []) c.end(`${HANDOVER_WORD}\n`);
      this.liveness?.clients.clear();
      // closed now, before the ports go: the passive gateway's next link must find nobody
      // here (refused, so it tries again) rather than this process, whose end would read as a
      // death; and the successor listens on this port next
      this.closeLiveness();
      log('info', 'stopping: the successor on this node takes the lease over (a rolling update)');
    } else {
      await elector.release();
      if (wasActive) log('info', 'stopping: the lease released (no successor waits on this node): the other gateway takes it over');
    }
    await afterLease();
    if (publishing) await withTimeout(publishing, 2000);
    if (wasActive && !handingOver)
      await withTimeout(
        this.mark(this.me, 'Released the lease (stopped)').catch(() => false),
        1000,
      );
    this.closeLiveness();
  }

  closeLiveness(): void {
    if (!this.liveness) return;
    for (const c of this.liveness.clients) c.destroy();
    this.liveness.server.close();
    this.liveness = undefined;
  }
}

/**
 * How often the Kubernetes-mode gateway reads its own records (in process) for the publisher,
 * which writes only what changed: a status change reaches the Gateway record within this of
 * the gateway's own 1.8 s, inside the 3 s bound of docs/faults.md (the world's multicluster
 * daemon polls its gateways' /records as often).
 */
const OWN_RECORDS_POLL_MS = 500;

/**
 * Kubernetes mode: this gateway publishes its own records (Endpoint, Gateway) in the operator
 * namespace, and with the broker of the cluster's join (none before the join) its Endpoint there.
 */
async function publishOwnRecords(
  gw: Gateway,
  lease: LeaseStore,
  log: Log,
): Promise<{ broker: ResourceStore | undefined; publisher: { stop(): Promise<void> } }> {
  const broker = await openBrokerOfCluster(lease.store).catch((err: unknown) => {
    log('warn', `the broker of the cluster's join is not reachable: publishing the records in this cluster only (${String(err)})`);
    return undefined;
  });
  const publisher = startRecordsPublisher({
    local: lease.store,
    ...(broker ? { broker } : {}),
    namespace: lease.recordsNamespace,
    intervalMs: OWN_RECORDS_POLL_MS,
    shape: 'submariner',
    version: VERSION,
    fetchRecords: () => Promise.resolve({ endpoint: gw.endpointRecord(), gateway: gw.gatewayRecord(), connections: gw.connectionRecords() }),
    onError: (err) => log('warn', `publishing the gateway records failed: ${String(err)}`),
    // the other clusters' active gateways, as Submariner's gateways follow the broker's Endpoints
    // (both of a record's addresses: the public one, and the private one a peer in the same network reaches)
    onBrokerEndpoints: (rows) =>
      gw.followPeerEndpoints(
        rows
          .filter((r) => r.cluster !== gw.config.clusterId)
          .flatMap((r) => [r.publicIP, r.endpointIP].filter((a) => a !== '').map((address) => ({ cluster: r.cluster, address }))),
      ),
  });
  return { broker, publisher };
}

export async function startGatewayHa(
  gw: Gateway,
  log: Log,
  onLost: () => void,
  env: NodeJS.ProcessEnv = process.env,
  /** at stop: whether a successor on this node waits to take over (a rolling update, dataplane/handover) */
  successorWaiting: () => Promise<boolean> = () => Promise.resolve(false),
): Promise<GatewayHa> {
  const ha = gw.config.ha;
  if (!ha) throw new Error('startGatewayHa without ha config');
  const self = ha.members.find((m) => m.name === gw.config.name);
  const lease = openLeaseStore(ha, env);
  const liveness = self && ha.liveness ? await listenLiveness(ha.port, self.address) : undefined;
  // Kubernetes mode without ha.members: the gateway nodes are the members, followed by a watch;
  // this gateway listens once its own Node object gives its address (whenever the list arrives)
  const fromNodes = !self && lease.kubernetes && ha.members.length === 0 && ha.liveness;
  // the member is made below, after the watch that needs it (its callbacks run later)
  const ref: { member?: HaMember } = {};
  let listening: 'no' | 'pending' | 'yes' = 'no';
  const nodes = fromNodes
    ? watchGatewayNodes(lease.store, {
        onError: (err) => log('warn', `listing/watching the gateway nodes failed; retrying: ${String(err)}`),
        onChange: (addresses) => {
          const mine = addresses.get(gw.config.name);
          if (mine && listening === 'no') {
            listening = 'pending';
            listenLiveness(ha.port, mine).then(
              (l) => {
                listening = 'yes';
                ref.member?.setLiveness(l);
                log('info', `liveness link: listening on ${mine}:${ha.port} (members: the gateway nodes ${[...addresses.keys()].join(', ')})`);
              },
              (err: unknown) => {
                listening = 'no';
                log('warn', `the liveness link cannot listen on ${mine}:${ha.port}: ${String(err)} (the lease expiry decides meanwhile)`);
              },
            );
          }
          ref.member?.refollow();
        },
      })
    : undefined;
  const addressOf = (name: string): string | undefined => ha.members.find((m) => m.name === name)?.address ?? nodes?.addresses.get(name);
  const member = new HaMember(gw, ha, lease, liveness, log, onLost, addressOf, liveness !== undefined || fromNodes);
  ref.member = member;
  const { elector } = member;
  elector.start();
  const records = lease.kubernetes ? await publishOwnRecords(gw, lease, log) : undefined;
  return {
    elector,
    mode: lease.kubernetes ? 'kubernetes' : 'world',
    namespace: lease.namespace,
    recordsNamespace: lease.recordsNamespace,
    async stop(afterLease) {
      member.stop();
      nodes?.stop();
      // a tick in flight may have read the record `active`: it lands before the mark below
      const publishing = records?.publisher.stop();
      await member.leave(publishing, successorWaiting, log, afterLease);
      await records?.broker?.close();
      await lease.store.close();
    },
  };
}
