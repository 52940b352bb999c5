// Every STRAIT_ERR_* code, grouped by the part of strait that owns it (codes/<owner>.ts).
// Call sites use the flat `E`: `throw E.configInvalid('world.clusters[0].cidr', '10.1/16', 'must be a CIDR')`.
// docs/errors.md has one section per owner, in this order, with the codes in declaration
// order; test/unit/errors.test.ts keeps the two equal.
import { base } from './codes/base.js';
import { githost } from './codes/githost.js';
import { gitops } from './codes/gitops.js';
import { mesh } from './codes/mesh.js';
import { multicluster } from './codes/multicluster.js';
import { platform } from './codes/platform.js';
import { world } from './codes/world.js';
import type { ErrorKind } from './kinds.js';

/** The owners, in the order docs/errors.md shows them. The cli owns no code of its own yet. */
export const ERROR_GROUPS = { base, platform, multicluster, mesh, gitops, githost, world } as const;

export type ErrorOwner = keyof typeof ERROR_GROUPS;

export const E = { ...base, ...platform, ...multicluster, ...mesh, ...gitops, ...githost, ...world };

/** 'STRAIT_ERR_CONFIG_INVALID' | 'STRAIT_ERR_USAGE' | …: a code no definition has does not compile. */
export type ErrorCode = (typeof E)[keyof typeof E]['code'];

export interface ErrorCodeInfo {
  owner: ErrorOwner;
  /** the factory's name in E */
  name: string;
  code: ErrorCode;
  kind: ErrorKind;
  giteaStatus: number | undefined;
  /** the protocol status (405, 408, 413, 429) where the definition has one */
  httpStatus: number | undefined;
}

const INFO: ErrorCodeInfo[] = Object.entries(ERROR_GROUPS).flatMap(([owner, group]) =>
  Object.entries(group).map(([name, f]) => ({
    owner: owner as ErrorOwner,
    name,
    code: f.code,
    kind: f.kind,
    giteaStatus: f.giteaStatus,
    httpStatus: f.httpStatus,
  })),
);

const BY_CODE = new Map<string, ErrorCodeInfo>(INFO.map((i) => [i.code, i]));

/** Every definition, owner by owner, in declaration order. */
export function listErrorDefinitions(): ErrorCodeInfo[] {
  return INFO.map((i) => ({ ...i }));
}

/** Every code this module can raise, in declaration order. */
export function listErrorCodes(): ErrorCode[] {
  return INFO.map((i) => i.code);
}

/** The definition of a code received as text (from a wire), or undefined for a code strait does not have. */
export function definitionOf(code: string): ErrorCodeInfo | undefined {
  return BY_CODE.get(code);
}
