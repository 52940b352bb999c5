// Following a cluster's join: the broker connection `strait join` (or the world's bootstrap)
// recorded in the cluster's store, taken once it is the broker's current one, and taken again
// whenever the join changes (a new deploy-broker and join, a restarted world's new store
// token). One DebouncedLoop (src/platform/controller) looks at the join; it is woken by a
// change of the join's Secrets where this process may watch them (the local world), else by
// a poll (Kubernetes mode: the join's Role gives get only). A join that is missing or not
// current yet is looked at again after the loop's backoff.
import type { Logger } from '../../../base/log/index.js';
import { DebouncedLoop, Informer, type BackoffPolicy } from '../../../platform/controller/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { MC_KINDS, OPERATOR_NAMESPACE, openCurrentBroker, readJoinConnection } from '../clusterset/index.js';

export interface CurrentJoin {
  /** changes whenever the join's connection or PSK changes */
  key: string;
  url: string;
  /** an open client of the join's broker; the onJoin callee owns it from then on */
  broker: ResourceStore;
}

export interface JoinFollowOptions {
  local: ResourceStore;
  log: Logger;
  /** wake on changes of the join's Secrets (needs list and watch on Secrets of the operator namespace) */
  watch: boolean;
  /** look at the join again this often also without a change, ms (0: never) */
  pollMs?: number;
  /** how soon a missing or not yet current join is looked at again */
  backoff?: BackoffPolicy;
  /** a current join different from the one before (the first one included); a throw: retried */
  onJoin(join: CurrentJoin): Promise<void>;
}

/** Why the loop looks again later (logged once per reason). */
class NotYet extends Error {}

export function followJoin(o: JoinFollowOptions): { stop(): Promise<void> } {
  let current: string | undefined;
  let stopped = false;
  let said = '';
  let inflight: Promise<void> = Promise.resolve();
  const look = async (): Promise<void> => {
    const found = await readJoinConnection(o.local);
    if (!found) {
      if (current === undefined) throw new NotYet('not joined yet');
      return; // a join removed: keep the connection there is
    }
    if (found.key === current) return;
    const r = await openCurrentBroker(found).catch((err: unknown) => ({ stale: `the broker is not reachable: ${String(err)}` }));
    if ('stale' in r) throw new NotYet(r.stale);
    if (stopped) {
      await r.broker.close();
      return;
    }
    try {
      await o.onJoin({ key: found.key, url: found.url, broker: r.broker });
    } catch (err) {
      await r.broker.close().catch(() => undefined);
      throw err;
    }
    current = found.key;
    said = '';
  };
  const onError = (err: unknown): void => {
    if (!(err instanceof NotYet)) {
      o.log.debug({ err }, 'reading the join failed');
      return;
    }
    if (err.message === said) return;
    said = err.message;
    if (current !== undefined) o.log.warn({ why: err.message }, 'the join changed, but is not current: keeping the broker connection');
    else
      o.log.info(
        { why: err.message },
        err.message === 'not joined yet' ? 'waiting for this cluster to join a broker' : 'waiting for a current join of this cluster',
      );
  };
  const loop = new DebouncedLoop(() => (inflight = look()), { debounceMs: 0, backoff: o.backoff ?? { initialMs: 200, maxMs: 1000 }, onError });
  const schedule = (): void => loop.schedule();
  const watch = o.watch
    ? new Informer(
        o.local,
        MC_KINDS.Secret,
        { namespace: OPERATOR_NAMESPACE },
        {
          onList: schedule,
          onEvent: schedule,
          onError: (err) => o.log.debug({ err }, 'watching the join failed'),
        },
      ).start()
    : undefined;
  const poll = o.pollMs ? setInterval(schedule, o.pollMs) : undefined;
  loop.schedule();
  return {
    async stop() {
      stopped = true;
      loop.stop();
      watch?.stop();
      clearInterval(poll);
      await inflight.catch(() => undefined);
    },
  };
}
