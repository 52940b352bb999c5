// Argo CD's API over gRPC, gRPC-web and Connect (one router, @connectrpc/connect), in front of
// the same handlers as the REST API (api-handlers.ts). Messages cross as JSON (argocd-json.ts).
import type { DescMethodServerStreaming, DescMethodUnary, Message } from '@bufbuild/protobuf';
import {
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type Code,
  type ConnectRouter,
  type HandlerContext,
} from '@connectrpc/connect';
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import { grpcStatusOf } from '../../base/errors/index.js';
import { STRAIT_ERROR_HEADER } from '../../platform/http/index.js';
import { errorKindOf, type ApiHandlers, type Caller } from './api-handlers.js';
import type { AnyRequest, AnyResponse } from './api-listener.js';
import { jsonToMessage, messageToJson } from './argocd-json.js';
import { ARGOCD_SERVICES, argocdService } from '../wire/index.js';

/** The client's address, handed from the Node request to the handlers. */
const CLIENT_ADDR = createContextKey('', { description: 'client address' });

function callerOf(ctx: HandlerContext): Caller {
  const h = ctx.requestHeader;
  const auth = h.get('authorization') ?? '';
  // metadata `token` or Authorization: Bearer, as Argo CD's server reads them; never the browser's
  // session cookie (Argo CD takes it only through its REST gateway): a page of another origin
  // could send it along with a gRPC-web or Connect request
  return {
    token: h.get('token') ?? (auth.startsWith('Bearer ') ? auth.slice(7).trim() : undefined),
    addr: ctx.values.get(CLIENT_ADDR),
    rpc: { userAgent: h.get('user-agent') ?? '' },
  };
}

/** A StraitError/ApiError as the gRPC status its kind names (Unauthenticated, NotFound, ...), its code in the strait-error-code trailer. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const { kind, code, message } = errorKindOf(err);
  return new ConnectError(message, grpcStatusOf(kind).code as Code, { [STRAIT_ERROR_HEADER]: code });
}

export function argocdRoutes(api: ApiHandlers): (router: ConnectRouter) => void {
  return (router) => {
    for (const name of ARGOCD_SERVICES) {
      const svc = argocdService(name);
      for (const m of svc.methods) {
        const key = `${name}/${m.name}`;
        if (m.methodKind === 'unary') {
          const h = api.unary[key];
          if (!h) continue;
          router.rpc(m as DescMethodUnary, async (req: Message, ctx: HandlerContext) => {
            try {
              const caller = callerOf(ctx);
              if (h.auth) api.user(caller);
              return jsonToMessage(m.output, await h.call(messageToJson(m.input, req), caller));
            } catch (err) {
              throw toConnectError(err);
            }
          });
        } else if (m.methodKind === 'server_streaming') {
          const h = api.streams[key];
          if (!h) continue;
          router.rpc(m as DescMethodServerStreaming, async function* (req: Message, ctx: HandlerContext) {
            const caller = callerOf(ctx);
            try {
              if (h.auth) api.user(caller);
            } catch (err) {
              throw toConnectError(err);
            }
            for await (const ev of h.stream(messageToJson(m.input, req), caller, ctx.signal)) yield jsonToMessage(m.output, ev);
          });
        }
      }
    }
  };
}

const GRPC_WEB = /^application\/grpc-web(\+proto)?$/;
const GRPC_UNIMPLEMENTED = 12;

const safeDecode = (v: string): string => {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
};

/** grpc-message as grpc-go writes it: only '%' and bytes outside printable ASCII percent-encoded
 *  (argocd's gRPC-web proxy shows the header as it comes). */
export function grpcMessage(text: string): string {
  let out = '';
  for (const b of Buffer.from(text, 'utf8'))
    out += b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/**
 * gRPC-web errors as a "trailers-only" answer: grpc-status and grpc-message in the HTTP headers,
 * no body. Connect writes them as a trailer frame; argocd's gRPC-web proxy reads the status only
 * from headers (as Argo CD's server sends it) and takes a lone trailer frame for success.
 */
async function trailersOnly(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const body = res.body;
  if (!body || !(Symbol.asyncIterator in Object(body))) return res;
  const it = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return res;
  const chunk = first.value;
  if (chunk.length >= 5 && chunk[0] === 0x80) {
    const header = new Headers(res.header);
    for (const line of Buffer.from(chunk.subarray(5)).toString('utf8').split('\r\n')) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      header.set(name, name.toLowerCase() === 'grpc-message' ? grpcMessage(safeDecode(value)) : value);
    }
    return {
      ...res,
      header,
      body: (async function* () {
        /* trailers-only: no frames */
      })(),
    };
  }
  return {
    ...res,
    body: (async function* () {
      yield chunk;
      for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
    })(),
  };
}

/** The RPC path of a request, also behind a gRPC-web root path (`/argo-cd/session.SessionService/Create`). */
export function rpcPathOf(url: string, known: ReadonlySet<string>): string | undefined {
  const path = url.split('?')[0] ?? '';
  const m = /(\/[A-Za-z0-9_.]+\/[A-Za-z0-9_]+)$/.exec(path);
  return m && known.has(m[1]!) ? m[1] : undefined;
}

/** A Node request handler: RPCs to the router, everything else to `fallback` (the REST API). */
export interface ArgoRpcHandler {
  (req: AnyRequest, res: AnyResponse): void;
  /** the RPC paths served (`/session.SessionService/Create`, ...) */
  readonly rpcPaths: ReadonlySet<string>;
  /** whether a request path goes to an RPC (also behind a gRPC-web root path) */
  servesRpc(path: string): boolean;
}

export function createArgoRpcHandler(api: ApiHandlers, fallback: (req: AnyRequest, res: AnyResponse) => void): ArgoRpcHandler {
  const router = createConnectRouter({ readMaxBytes: 4 * 1024 * 1024 });
  argocdRoutes(api)(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  const known = new Set(handlers.keys());
  const handler = (req: AnyRequest, res: AnyResponse): void => {
    const path = rpcPathOf(req.url ?? '/', known);
    const h = path ? handlers.get(path) : undefined;
    const contentType = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if ((!h || !path) && contentType.startsWith('application/grpc')) {
      // an RPC strait does not serve (docs/gitops.md): Unimplemented, trailers-only, as gRPC servers answer
      const headers = {
        'content-type': contentType,
        'grpc-status': String(GRPC_UNIMPLEMENTED),
        'grpc-message': grpcMessage(`unknown method ${req.url ?? ''}: strait does not serve it`),
      };
      // HTTP/2: one HEADERS frame that ends the stream (a gRPC client takes a later one for trailers)
      if ('stream' in res) res.stream.respond({ ':status': 200, ...headers }, { endStream: true });
      else {
        res.writeHead(200, headers);
        res.end();
      }
      return;
    }
    if (!h || !path) return fallback(req, res);
    const uReq = universalRequestFromNodeRequest(req, res, undefined, createContextValues().set(CLIENT_ADDR, req.socket.remoteAddress ?? ''));
    const web = GRPC_WEB.test(contentType);
    void (async () => {
      const uRes = await h({ ...uReq, url: new URL(path, uReq.url).toString() });
      await universalResponseToNodeResponse(web ? await trailersOnly(uRes) : uRes, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
  return Object.assign(handler, { rpcPaths: known, servesRpc: (path: string) => rpcPathOf(path, known) !== undefined });
}
