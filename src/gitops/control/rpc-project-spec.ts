// A project update that came as Argo CD's protobuf message (gRPC, gRPC-web, Connect). The client
// read the project through the same messages, so what they have no field number for it never saw
// and could not send back: strait's spec.sshSigners, spec.sourceIntegrity.helm, a policy's
// `strait` signer rules, and spec fields strait keeps but does not serve (roles, syncWindows).
// Replacing the spec with the message would drop them, and with them signature enforcement, so
// they are carried over from the stored project. A list's elements are paired by what the client
// saw of them (docs/gitops.md "Managing policies through the API").
import type { DescMessage } from '@bufbuild/protobuf';
import { E } from '../../base/errors/index.js';
import { argocdMessage, V1A1_MESSAGE } from '../wire/index.js';
import { isObject, jsonToMessage, messageToJson } from './argocd-json.js';
import type { AppProjectSpec } from './types.js';

type Json = Record<string, unknown>;

/** What a client received of `v` (and sends back unchanged): `v` through the message and back, as text. */
function seen(desc: DescMessage, v: unknown): string | undefined {
  try {
    return JSON.stringify(messageToJson(desc, jsonToMessage(desc, v)));
  } catch {
    return undefined;
  }
}

/** `incoming` (wire fields only) plus the fields of `stored` that `desc` has no number for, recursively. */
export function keepUnwired(desc: DescMessage, incoming: Json, stored: Json): Json {
  const out: Json = { ...incoming };
  for (const [k, v] of Object.entries(stored)) {
    const f = desc.fields.find((x) => x.jsonName === k || x.name === k);
    if (!f) {
      if (!(k in out)) out[k] = v;
      continue;
    }
    const mine = out[k];
    if (f.fieldKind === 'message' && isObject(mine) && isObject(v)) out[k] = keepUnwired(f.message, mine, v);
    else if (f.fieldKind === 'list' && f.listKind === 'message' && Array.isArray(mine) && Array.isArray(v)) out[k] = keepUnwiredInList(f.message, mine, v);
  }
  return out;
}

/**
 * Pair each incoming element with the stored one it was read as: first the same index if the client
 * saw it so, then an equal one elsewhere (the list lost elements before it), then the same index if
 * the list did not shrink (the client edited that element, or appended after it). Unpaired elements
 * are new and get nothing.
 */
function keepUnwiredInList(desc: DescMessage, incoming: unknown[], stored: unknown[]): unknown[] {
  const was = stored.map((s) => seen(desc, s));
  const now = incoming.map((e) => seen(desc, e));
  const pair: (number | undefined)[] = incoming.map(() => undefined);
  const used = new Set<number>();
  const take = (i: number, j: number): void => {
    pair[i] = j;
    used.add(j);
  };
  incoming.forEach((_, i) => {
    if (i < stored.length && now[i] !== undefined && now[i] === was[i]) take(i, i);
  });
  incoming.forEach((_, i) => {
    if (pair[i] !== undefined || now[i] === undefined) return;
    const j = was.findIndex((w, j2) => !used.has(j2) && w === now[i]);
    if (j >= 0) take(i, j);
  });
  if (incoming.length >= stored.length)
    incoming.forEach((_, i) => {
      if (pair[i] === undefined && i < stored.length && !used.has(i)) take(i, i);
    });
  return incoming.map((e, i) => {
    const j = pair[i];
    const s = j === undefined ? undefined : stored[j];
    return j !== undefined && isObject(e) && isObject(s) ? keepUnwired(desc, e, s) : e;
  });
}

/**
 * True when the client says it is an argocd CLI of 3.5 or later (it has
 * AppProjectSpec.sourceIntegrity, field 15). A build without a version stamp says
 * "argocd-client/v99.99.99+unknown" (Argo CD's default): an unknown version, taken as old.
 * What this answers only ever refuses an update, never drops a field (projectSpecFromRpc).
 */
export function claimsSourceIntegrity(userAgent: string): boolean {
  const m = /(?:^|\s)argocd-client\/v?(\d+)\.(\d+)\.(\d+)/.exec(userAgent);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major === 99 && minor === 99 && patch === 99) return false;
  return major > 3 || (major === 3 && minor >= 5);
}

/**
 * The spec to store for a project update that came over gRPC: the message's spec plus what it
 * cannot carry (keepUnwired). `sourceIntegrity` left out is kept, whatever the client says it is:
 * a client older than 3.5 has no field for it, and a user agent proves nothing. A client that says
 * it is argocd 3.5 or later leaves it out only to remove it (`policies delete` of the last policy):
 * that update is refused with STRAIT_ERR_GITOPS_SOURCE_INTEGRITY_LEFT_OUT, which says how to switch
 * verification off explicitly. A sourceIntegrity the message names but leaves empty (neither git
 * nor helm, after strait's unwired helm part is carried over) is removed: the client named it.
 */
export function projectSpecFromRpc(project: string, incoming: AppProjectSpec, stored: AppProjectSpec, userAgent: string): AppProjectSpec {
  const spec = keepUnwired(argocdMessage(V1A1_MESSAGE('AppProjectSpec')), incoming as Json, stored as Json);
  const si = spec['sourceIntegrity'];
  if (si === undefined || si === null) {
    if (stored.sourceIntegrity === undefined || stored.sourceIntegrity === null) return spec as AppProjectSpec;
    if (claimsSourceIntegrity(userAgent)) throw E.sourceIntegrityLeftOut(project, userAgent);
    spec['sourceIntegrity'] = stored.sourceIntegrity;
  } else if (isObject(si) && si['git'] === undefined && si['helm'] === undefined) {
    spec['sourceIntegrity'] = null;
  }
  return spec as AppProjectSpec;
}
