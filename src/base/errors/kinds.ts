// The one table that classifies failures. Every StraitError has a kind; the CLI's exit
// status, the HTTP status of strait's APIs and the gRPC status of the Argo CD-compatible
// API all come from this table, never from each other. docs/errors.md shows it; a test
// keeps the two equal.

/** gRPC status codes (google.golang.org/grpc/codes) that the kinds use. */
export const GRPC_CODES = {
  Unknown: 2,
  InvalidArgument: 3,
  NotFound: 5,
  AlreadyExists: 6,
  PermissionDenied: 7,
  FailedPrecondition: 9,
  OutOfRange: 11,
  Internal: 13,
  Unavailable: 14,
  Unauthenticated: 16,
} as const;

export type GrpcStatusName = keyof typeof GRPC_CODES;

interface KindRow {
  readonly exit: number;
  readonly http: number;
  readonly grpc: GrpcStatusName;
}

/**
 * kind -> exit status, HTTP status, gRPC status. Kinds that share an exit status differ
 * on the wire: `exists` and `conflict` (AlreadyExists vs FailedPrecondition), `denied`
 * and `unauthenticated` (403 vs 401), `failed` and `internal` (Unknown vs Internal).
 */
export const KINDS = {
  /** bad input: arguments, configuration, manifests, packets; retrying the same input fails again */
  usage: { exit: 2, http: 400, grpc: 'InvalidArgument' },
  /** the named thing does not exist */
  notFound: { exit: 3, http: 404, grpc: 'NotFound' },
  /** create of something that exists */
  exists: { exit: 4, http: 409, grpc: 'AlreadyExists' },
  /** the request clashes with the current state (stale resourceVersion, overlapping CIDR, a running world) */
  conflict: { exit: 4, http: 409, grpc: 'FailedPrecondition' },
  /** a service strait needs cannot be reached; retry later */
  unavailable: { exit: 5, http: 503, grpc: 'Unavailable' },
  /** the caller is known (or needs no credentials) but may not do this */
  denied: { exit: 6, http: 403, grpc: 'PermissionDenied' },
  /** missing, wrong or expired credentials */
  unauthenticated: { exit: 6, http: 401, grpc: 'Unauthenticated' },
  /** a position (resourceVersion) older than what is kept; start over from a fresh list */
  expired: { exit: 1, http: 410, grpc: 'OutOfRange' },
  /** the operation ran and failed: a system program or an upstream API refused, a check found problems */
  failed: { exit: 1, http: 500, grpc: 'Unknown' },
  /** a bug in strait */
  internal: { exit: 1, http: 500, grpc: 'Internal' },
} as const satisfies Record<string, KindRow>;

export type ErrorKind = keyof typeof KINDS;

/** The kinds in table order (the order docs/errors.md shows them in). */
export function listKinds(): ErrorKind[] {
  return Object.keys(KINDS) as ErrorKind[];
}

export function exitCodeOf(kind: ErrorKind): number {
  return KINDS[kind].exit;
}

/** gRPC status name and number, as grpc-gateway writes them in an error body. */
export function grpcStatusOf(kind: ErrorKind): { name: GrpcStatusName; code: number } {
  const name = KINDS[kind].grpc;
  return { name, code: GRPC_CODES[name] };
}
