/** People read from the diff per page: one Google request's worth. */
export const DIFF_PAGE = 10_000;

/** Why a run stops, as `error_code` says it (SPEC 10.3). */
export type SyncErrorCode =
  | 'reauthorize_required'
  | 'terms_not_accepted'
  | 'rate_limited'
  | 'platform_unavailable'
  | 'audience_flagged'
  | 'not_found'
  | 'permission_denied'
  | 'invalid_request'
  | 'platform_error'
  | 'destination_removed'
  | 'audience_not_active'
  | 'verdict_unavailable';

/** The run cannot go on: it ends `failed` (or `cancelled`) with this code and detail. */
export class RunStopped extends Error {
  constructor(
    readonly code: SyncErrorCode,
    readonly detail: string,
    readonly status: 'failed' | 'cancelled' = 'failed',
  ) {
    super(detail);
  }
}

/** The run waits longer than a job should sleep: it goes on in a later job. */
export class RunDeferred extends Error {
  constructor(readonly seconds: number) {
    super(`deferred ${seconds}s`);
  }
}
