// Three kinds of reconcile failure, handled differently (Flux's internal/error):
//   stalled   configuration that retrying will not fix; wait for a change (or the poll)
//   waiting   something not there yet (a project, a revision); retry after a delay
//   transient a fetch or a store write failed; retry with backoff
export type FailureKind = 'stalled' | 'waiting' | 'transient';

export class ReconcileFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    /** Application condition type: ComparisonError, InvalidSpecError, SyncError */
    readonly conditionType: string,
    readonly reason: string,
    message: string,
    readonly opts: {
      syncError?: boolean;
      /** a Warning Event with this reason (ResourceComparison for refusals: one reason for every refused sync, docs/gitops.md "Refusals") */
      eventReason?: string;
      /** also a Warning Event whose reason is this failure's own reason (each signature refusal has its own, failures.ts) */
      ownEvent?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'ReconcileFailure';
  }
}

export const stalled = (type: string, reason: string, message: string, opts?: ReconcileFailure['opts']): ReconcileFailure =>
  new ReconcileFailure('stalled', type, reason, message, opts);
export const waiting = (type: string, reason: string, message: string): ReconcileFailure => new ReconcileFailure('waiting', type, reason, message);
export const transient = (type: string, reason: string, message: string): ReconcileFailure => new ReconcileFailure('transient', type, reason, message);
