// The store API's multi-watch stream: one long request carrying the list-then-watch of
// several (cluster, kind[, namespace]) at once, so a client that follows many kinds (the
// web console: about twenty) needs one connection, not one per kind (browsers keep six
// per origin over HTTP/1.1).
//   GET /v1/stream?watch=CLUSTER,APIVERSION,KIND[,NAMESPACE]&watch=...
// Each watch is an Informer: list, then watch from the list's resourceVersion, list again
// after the backoff when the watch ends. Messages (JSON, one per line; with
// "Accept: text/event-stream", one per server-sent event `data:` line):
//   {"type":"LIST","watch":i,"items":[…]}          the full set (first, and after every re-list)
//   {"type":"ADDED|MODIFIED|DELETED","watch":i,"object":…}
//   {"type":"ERROR","watch":i,"error":{code,message,detail}}   the informer lists again
import type { IncomingMessage, ServerResponse } from 'node:http';
import { E } from '../../../base/errors/index.js';
import { Informer } from '../../controller/index.js';
import type { KindRef, ResourceStore } from '../types.js';
import { MAX_WATCH_BACKLOG, toWireError } from './protocol.js';

export interface StreamWatch {
  cluster: string;
  kind: KindRef;
  namespace?: string;
}

/** at most this many watches in one stream */
export const MAX_STREAM_WATCHES = 64;
/** a comment line this often keeps proxies and browsers from closing an idle stream */
export const STREAM_HEARTBEAT_MS = 15_000;

/** The watches of a stream request's query; bad ones are a usage error naming the value. */
export function parseStreamWatches(q: URLSearchParams): StreamWatch[] {
  const all = q.getAll('watch');
  if (all.length === 0) throw E.usage('the stream needs at least one watch=CLUSTER,APIVERSION,KIND[,NAMESPACE]', { watch: [] });
  if (all.length > MAX_STREAM_WATCHES) throw E.usage(`a stream carries at most ${MAX_STREAM_WATCHES} watches (got ${all.length})`, { count: all.length });
  return all.map((w) => {
    const [cluster, apiVersion, kind, namespace, ...rest] = w.split(',');
    if (!cluster || !apiVersion || !kind || rest.length > 0) {
      throw E.usage(`watch ${JSON.stringify(w)} must be CLUSTER,APIVERSION,KIND[,NAMESPACE]`, { watch: w });
    }
    return { cluster, kind: { apiVersion, kind }, ...(namespace ? { namespace } : {}) };
  });
}

/** Serve one stream until the client goes away or the server closes it (returns its stop). */
export function serveStream(req: IncomingMessage, res: ServerResponse, watches: StreamWatch[], stores: ReadonlyMap<string, ResourceStore>): () => void {
  const sse = /text\/event-stream/.test(req.headers.accept ?? '');
  res.writeHead(200, {
    'content-type': sse ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  if (sse) res.write('retry: 1000\n\n');
  let ended = false;
  const informers: Informer[] = [];
  const send = (msg: unknown): void => {
    if (ended) return;
    const text = JSON.stringify(msg);
    res.write(sse ? `data: ${text}\n\n` : `${text}\n`);
    // a client that does not read is not allowed to pile up the server's memory
    if ((res.writableLength ?? 0) > MAX_WATCH_BACKLOG) stop();
  };
  const heartbeat = setInterval(() => {
    if (!ended) res.write(sse ? ': keep-alive\n\n' : '\n');
  }, STREAM_HEARTBEAT_MS);
  heartbeat.unref();
  function stop(): void {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    for (const i of informers) i.stop();
    res.end();
  }
  watches.forEach((w, i) => {
    const store = stores.get(w.cluster);
    if (!store) {
      send({ type: 'ERROR', watch: i, error: toWireError(E.clusterUnknown(w.cluster, [...stores.keys()])) });
      return;
    }
    informers.push(
      new Informer(store, w.kind, w.namespace ? { namespace: w.namespace } : {}, {
        onList: (items) => send({ type: 'LIST', watch: i, items }),
        onEvent: (type, object) => send({ type, watch: i, object }),
        onError: (err) => send({ type: 'ERROR', watch: i, error: toWireError(err) }),
      }).start(),
    );
  });
  res.on('close', stop);
  return stop;
}
