// The JSON bridge of Argo CD's messages: a request is decoded with Argo CD's descriptors
// (argocd-proto.ts) and handed to the handlers in its JSON shape; an answer's JSON is encoded
// with ignoreUnknownFields, so what Argo CD has no field for (strait's status.signature) stays
// REST-only. metav1.Time is a message on the wire and an RFC 3339 string in JSON.
import { fromJson, toJson, type DescMessage, type JsonValue, type Message } from '@bufbuild/protobuf';
import { K8S_TIME } from '../wire/index.js';

type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function timeToWire(v: unknown): unknown {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) return undefined;
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 };
}

function timeFromWire(v: unknown): unknown {
  if (!isObject(v)) return undefined;
  const ms = Number(v['seconds'] ?? 0) * 1000 + Math.floor(Number(v['nanos'] ?? 0) / 1e6);
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

/** Walk JSON along a message descriptor: drop what it has no field for and nulls, convert Time. */
function walk(desc: DescMessage, v: unknown, time: (v: unknown) => unknown): unknown {
  if (desc.typeName === K8S_TIME) return time(v);
  if (!isObject(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const f of desc.fields) {
    const val = v[f.jsonName] ?? v[f.name];
    if (val === undefined || val === null) continue;
    if (f.fieldKind === 'message') {
      const m = walk(f.message, val, time);
      if (m !== undefined) out[f.jsonName] = m;
    } else if (f.fieldKind === 'list' && f.listKind === 'message') {
      if (Array.isArray(val)) out[f.jsonName] = val.map((x) => walk(f.message, x, time)).filter((x) => x !== undefined);
    } else {
      out[f.jsonName] = val;
    }
  }
  return out;
}

export function jsonToMessage(desc: DescMessage, json: unknown): Message {
  return fromJson(desc, (walk(desc, json, timeToWire) ?? {}) as JsonValue, { ignoreUnknownFields: true });
}

export function messageToJson(desc: DescMessage, msg: Message): Json {
  return (walk(desc, toJson(desc, msg), timeFromWire) ?? {}) as Json;
}
