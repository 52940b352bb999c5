// strait's one errors module: a base class, one factory per condition, each with a
// stable code (STRAIT_ERR_*). docs/errors.md lists every code; a test keeps the two equal.
export { StraitError, isStraitError, type ErrorDetail } from './strait-error.js';
export { E, listErrorCodes, type ErrorCode } from './codes.js';
