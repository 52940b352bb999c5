// A project update that came as Argo CD's protobuf message (gRPC, gRPC-web, Connect). The client
// read the project through the same messages, so what they have no field number for it never saw
// and could not send back: strait's spec.sshSigners, spec.sourceIntegrity.helm, a policy's
// `strait` signer rules, and spec fields strait keeps but does not serve (roles, syncWindows).
// Replacing the spec with the message would drop them, and with them signature enforcement, so
// they are carried over from the stored project. A list's elements are paired by what the client
// saw of them (docs/gitops.md "Managing policies through the API").
import type { DescMessage } from '@bufbuild/protobuf';
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
  const take = (i: number, j: number): void => { pair[i] = j; used.add(j); };
  incoming.forEach((_, i) => { if (i < stored.length && now[i] !== undefined && now[i] === was[i]) take(i, i); });
  incoming.forEach((_, i) => {
    if (pair[i] !== undefined || now[i] === undefined) return;
    const j = was.findIndex((w, j2) => !used.has(j2) && w === now[i]);
    if (j >= 0) take(i, j);
  });
  if (incoming.length >= stored.length) incoming.forEach((_, i) => { if (pair[i] === undefined && i < stored.length && !used.has(i)) take(i, i); });
  return incoming.map((e, i) => {
    const j = pair[i];
    const s = j === undefined ? undefined : stored[j];
    return j !== undefined && isObject(e) && isObject(s) ? keepUnwired(desc, e, s) : e;
  });
}

/** True when the client is an argocd CLI of 3.5 or later (it has AppProjectSpec.sourceIntegrity, field 15). */
export function knowsSourceIntegrity(userAgent: string): boolean {
  const m = /(?:^|\s)argocd-client\/v?(\d+)\.(\d+)/.exec(userAgent);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 3 || (major === 3 && minor >= 5);
}

/**
 * The spec to store for an update that came over gRPC: the message's spec plus what it cannot carry
 * (keepUnwired). `sourceIntegrity` left out stays as it is (controller.replaceProject: a client
 * older than 3.5 has no field for it) unless the client is argocd 3.5 or later, which leaves it out
 * to remove it (`argocd proj source-integrity git policies delete` of the last policy); then
 * only strait's unwired `helm` part, if any, remains.
 */
export function projectSpecFromRpc(incoming: AppProjectSpec, stored: AppProjectSpec, userAgent: string): AppProjectSpec {
  const spec = keepUnwired(argocdMessage(V1A1_MESSAGE('AppProjectSpec')), incoming as Json, stored as Json);
  if (!('sourceIntegrity' in spec) && stored.sourceIntegrity !== undefined && knowsSourceIntegrity(userAgent)) {
    const helm = stored.sourceIntegrity.helm;
    spec['sourceIntegrity'] = helm === undefined ? null : { helm };
  }
  return spec as AppProjectSpec;
}
