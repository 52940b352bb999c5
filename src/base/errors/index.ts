// strait's one errors module: a base class, one factory per condition, each with a
// stable code (STRAIT_ERR_*) and a kind; the kind table gives exit, HTTP and gRPC
// statuses. docs/errors.md lists every code and the table; a test keeps them equal.
export { StraitError, httpStatusOf, isStraitError, type ErrorDetail } from './strait-error.js';
export { type ErrorDefinition } from './define.js';
export { E, ERROR_GROUPS, definitionOf, listErrorCodes, listErrorDefinitions, type ErrorCode, type ErrorCodeInfo, type ErrorOwner } from './codes.js';
export { GRPC_CODES, KINDS, exitCodeOf, grpcStatusOf, listKinds, type ErrorKind, type GrpcStatusName } from './kinds.js';
export { hostPortArg, positiveIntArg } from './args.js';
export { formatVersionOf } from './format-version.js';
