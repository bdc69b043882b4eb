import { objectOf, providerCall, ProviderUnreachableError, retryAfterSeconds } from '../common/http/provider-call.js';
import type { AppConfig } from '../config/app-config.js';
import {
  type DestinationFailure,
  type DestinationOutcome,
  failed,
  type RefusalReason,
  safeDetail,
  succeeded,
  unreachable,
} from './destination-types.js';
import { type GoogleMemberBatch, googleBatchProblem } from './google-audience-members.js';

/**
 * Google's Data Manager API for Customer Match audiences (SPEC 10.3), over REST with the caller's
 * OAuth access token (scope `https://www.googleapis.com/auth/datamanager`; no developer token).
 *
 * Implements, from the v1 REST reference (developers.google.com/data-manager/api/reference/rest/v1)
 * as its discovery document is generated in googleapis/google-api-nodejs-client
 * `src/apis/datamanager/v1.ts`, and the protos in googleapis/googleapis `google/ads/datamanager/v1/`
 * (`user_list.proto`, `destination.proto`, `terms_of_service.proto`, `consent.proto`,
 * `request_status_per_destination.proto`, `error.proto`):
 * - `POST v1/{parent=accountTypes/*\/accounts/*}/userLists` and `GET v1/{name}`: a user list with
 *   `ingestedUserListInfo.uploadKeyTypes: [CONTACT_ID]`; its `contactIdInfo.matchRatePercentage`;
 *   the optional `login-account` header names a manager account;
 * - `POST v1/audienceMembers:ingest` and `:remove`: `destinations[{operatingAccount,
 *   loginAccount, productDestinationId}]`, `audienceMembers`, `encoding: HEX`,
 *   `termsOfService.customerMatchTermsOfServiceStatus: ACCEPTED` (ingest); answer `{requestId}`;
 * - `GET v1/requestStatus:retrieve?requestId=`: `requestStatusPerDestination[].requestStatus`
 *   (`PROCESSING | SUCCESS | PARTIAL_SUCCESS | FAILED`), `errorInfo.errorCounts[{reason, recordCount}]`.
 * Errors are google.rpc.Status (`error.code`, `error.status`, `error.details[]` with ErrorInfo and
 * BadRequest): developers.google.com/data-manager/api/devguides/concepts/understand-errors. Quota:
 * 429 `RESOURCE_EXHAUSTED` (…/devguides/limits). A token without the scope: 403 with ErrorInfo
 * reason `ACCESS_TOKEN_SCOPE_INSUFFICIENT` and `WWW-Authenticate: … error="insufficient_scope"`,
 * as Google APIs answer it (googleapis/google-api-python-client issue #915, analogdotnow/Analog #296).
 * The reference does not say whether 429 carries `Retry-After`: it is read when present.
 *
 * A request succeeds or fails whole, so batches are validated (google-audience-members.ts) before
 * they are sent, and a batch that would fail is refused here without a call.
 */

export { DATAMANAGER_SCOPE } from '../connections/connection-readiness.js';

/** The Google Ads accounts a call acts on: the customer the list lives in, and the manager it is reached through. */
export interface GoogleAccountRef {
  /** Google Ads customer id, digits only (the connection's `external_account_id`). */
  operatingAccountId: string;
  /** A manager account the signed-in user reaches the customer through; unset: the customer itself. */
  loginAccountId?: string | null;
}

export interface GoogleUserList {
  /** The numeric id: the destination's `platform_audience_id`. */
  id: string;
  /** `accountTypes/GOOGLE_ADS/accounts/{account}/userLists/{id}`. */
  resourceName: string;
  displayName: string;
  /** `OPEN` while the list takes members. */
  membershipStatus: string | null;
  /** 0–100; null when Google gave none. */
  matchRatePercentage: number | null;
}

export type GoogleRequestState = 'processing' | 'success' | 'partial_success' | 'failed' | 'unknown';

/** The verdict `requestStatus:retrieve` gives for one request (one destination per request here). */
export interface GoogleRequestVerdict {
  state: GoogleRequestState;
  /** Members the request carried, as Google counted them; null while processing. */
  recordCount: number | null;
  /** Records that failed, by Google's reason (`INVALID_SHA256_FORMAT`, …): counts, never rows. */
  errorCounts: Record<string, number>;
  warningCounts: Record<string, number>;
  /** Google's range for the upload's match rate (`MATCH_RANGE_…`), when it gave one. */
  uploadMatchRateRange: string | null;
}

export interface GoogleDataManagerSettings {
  /** The API origin without version (GOOGLE_DATA_MANAGER_URL). */
  baseUrl: string;
  timeoutMs: number;
}

const LABEL = 'Google Data Manager';
const ACCOUNT_ID = /^\d{1,20}$/;

export class GoogleDataManagerClient {
  constructor(private readonly settings: GoogleDataManagerSettings) {}

  static fromConfig(config: Pick<AppConfig, 'googleDataManagerUrl' | 'providerTimeoutMs'>): GoogleDataManagerClient {
    return new GoogleDataManagerClient({ baseUrl: config.googleDataManagerUrl, timeoutMs: config.providerTimeoutMs });
  }

  /** Creates a Customer Match list for contact information (emails, phones, addresses), open to members. */
  async createUserList(
    accessToken: string,
    account: GoogleAccountRef,
    list: { displayName: string; description?: string; membershipDurationDays?: number },
  ): Promise<DestinationOutcome<GoogleUserList>> {
    const invalid = accountProblem(account);
    if (invalid) return failed(invalid);
    const body: Record<string, unknown> = {
      displayName: list.displayName.slice(0, 255),
      membershipStatus: 'OPEN',
      ingestedUserListInfo: { uploadKeyTypes: ['CONTACT_ID'], contactIdInfo: { dataSourceType: 'DATA_SOURCE_TYPE_FIRST_PARTY' } },
    };
    if (list.description) body.description = list.description.slice(0, 1000);
    // A duration is whole days, sent as protobuf Duration seconds (`2592000s`).
    if (list.membershipDurationDays !== undefined) body.membershipDuration = `${Math.round(list.membershipDurationDays) * 86_400}s`;
    const answer = await this.call(accessToken, 'POST', `v1/accountTypes/GOOGLE_ADS/accounts/${account.operatingAccountId}/userLists`, {
      body,
      loginAccountId: account.loginAccountId,
    });
    if (!answer.ok) return answer;
    return userListOf(answer.value);
  }

  /** The list with its current match rate. */
  async getUserList(accessToken: string, account: GoogleAccountRef, userListId: string): Promise<DestinationOutcome<GoogleUserList>> {
    const invalid = accountProblem(account) ?? (ACCOUNT_ID.test(userListId) ? undefined : localRefusal('The user list id is not numeric.'));
    if (invalid) return failed(invalid);
    const answer = await this.call(
      accessToken,
      'GET',
      `v1/accountTypes/GOOGLE_ADS/accounts/${account.operatingAccountId}/userLists/${userListId}`,
      { loginAccountId: account.loginAccountId },
    );
    if (!answer.ok) return answer;
    return userListOf(answer.value);
  }

  /**
   * Adds one batch (≤ 10,000 members) to the list and gives the request id to poll. The Customer
   * Match terms are declared accepted only when the caller says the advertiser accepted them
   * (SPEC 10.3 `customer_match_terms_accepted`); otherwise nothing is sent.
   */
  ingestMembers(
    accessToken: string,
    target: GoogleAccountRef & { userListId: string; customerMatchTermsAccepted: boolean },
    batch: GoogleMemberBatch<unknown>,
  ): Promise<DestinationOutcome<{ requestId: string }>> {
    if (!target.customerMatchTermsAccepted)
      return Promise.resolve(
        failed({
          kind: 'refused',
          reason: 'terms_not_accepted',
          status: 0,
          platformCode: null,
          detail: 'The Customer Match terms are not accepted.',
        }),
      );
    return this.members(accessToken, 'ingest', target, batch);
  }

  /** Removes one batch (≤ 10,000 members, no consent needed) from the list. */
  removeMembers(
    accessToken: string,
    target: GoogleAccountRef & { userListId: string },
    batch: GoogleMemberBatch<unknown>,
  ): Promise<DestinationOutcome<{ requestId: string }>> {
    return this.members(accessToken, 'remove', target, batch);
  }

  /** Google's verdict on an earlier request; `processing` until it has one (Google suggests polling after about 30 minutes). */
  async retrieveRequestStatus(accessToken: string, requestId: string): Promise<DestinationOutcome<GoogleRequestVerdict>> {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(requestId)) return failed(localRefusal('The request id is malformed.', 'unknown_request'));
    const answer = await this.call(accessToken, 'GET', `v1/requestStatus:retrieve?requestId=${encodeURIComponent(requestId)}`, {});
    if (!answer.ok) return answer;
    const statuses = objectOf(answer.value).requestStatusPerDestination;
    const perDestination = (Array.isArray(statuses) ? statuses : []).map(objectOf);
    if (perDestination.length === 0) return failed(localRefusal('Google gave no status for the request.', 'other'));
    return succeeded(verdictOf(perDestination));
  }

  private async members(
    accessToken: string,
    operation: 'ingest' | 'remove',
    target: GoogleAccountRef & { userListId: string; customerMatchTermsAccepted?: boolean },
    batch: GoogleMemberBatch<unknown>,
  ): Promise<DestinationOutcome<{ requestId: string }>> {
    const invalid =
      accountProblem(target) ??
      (ACCOUNT_ID.test(target.userListId) ? undefined : localRefusal('The user list id is not numeric.')) ??
      (googleBatchProblem(batch) === undefined ? undefined : localRefusal(googleBatchProblem(batch)!));
    if (invalid) return failed(invalid);
    const destination: Record<string, unknown> = {
      operatingAccount: { accountType: 'GOOGLE_ADS', accountId: target.operatingAccountId },
      productDestinationId: target.userListId,
    };
    if (target.loginAccountId) destination.loginAccount = { accountType: 'GOOGLE_ADS', accountId: target.loginAccountId };
    const body: Record<string, unknown> = { destinations: [destination], audienceMembers: batch.members, encoding: 'HEX' };
    if (operation === 'ingest') body.termsOfService = { customerMatchTermsOfServiceStatus: 'ACCEPTED' };
    const answer = await this.call(accessToken, 'POST', `v1/audienceMembers:${operation}`, { body });
    if (!answer.ok) return answer;
    const requestId = objectOf(answer.value).requestId;
    if (typeof requestId !== 'string' || requestId === '') return failed(localRefusal('Google gave no request id.', 'other'));
    return succeeded({ requestId });
  }

  /** One call; any answer but a 2xx with a JSON object becomes a classified failure. */
  private async call(
    accessToken: string,
    method: 'GET' | 'POST',
    path: string,
    options: { body?: unknown; loginAccountId?: string | null },
  ): Promise<DestinationOutcome<unknown>> {
    const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.loginAccountId) headers['login-account'] = `accountTypes/GOOGLE_ADS/accounts/${options.loginAccountId}`;
    let answer: Awaited<ReturnType<typeof providerCall>>;
    try {
      answer = await providerCall(
        new URL(`${this.settings.baseUrl}/${path}`),
        { method, headers, ...(options.body !== undefined && { body: JSON.stringify(options.body) }) },
        this.settings.timeoutMs,
        LABEL,
      );
    } catch (error) {
      if (error instanceof ProviderUnreachableError) return failed(unreachable(error));
      throw error;
    }
    if (answer.status >= 200 && answer.status < 300 && typeof answer.body === 'object' && answer.body !== null)
      return succeeded(answer.body);
    return failed(classifyGoogleFailure(answer.status, answer.body, answer.headers));
  }
}

/** A google.rpc.Status error answer (or anything else that is not a 2xx) as SPEC 10.3 classifies it. */
export function classifyGoogleFailure(status: number, body: unknown, headers: Headers): DestinationFailure {
  const error = objectOf(objectOf(body).error);
  const rpcStatus = typeof error.status === 'string' ? error.status : null;
  const reasons = reasonsOf(error.details);
  const detail = safeDetail(error.message, `${LABEL} answered ${status}.`);
  if (status === 429 || rpcStatus === 'RESOURCE_EXHAUSTED')
    return {
      kind: 'retryable',
      reason: 'rate_limited',
      retryAfterSeconds: retryAfterSeconds(headers.get('retry-after')) ?? null,
      platformCode: reasons[0] ?? rpcStatus,
      detail,
    };
  if (status === 401 || rpcStatus === 'UNAUTHENTICATED') return { kind: 'grant_lost', grant: 'invalid', detail };
  if (
    status === 403 &&
    (reasons.includes('ACCESS_TOKEN_SCOPE_INSUFFICIENT') || /insufficient_scope/.test(headers.get('www-authenticate') ?? ''))
  )
    return { kind: 'scope_missing', detail };
  let reason: RefusalReason = 'other';
  if (reasons.includes('TERMS_AND_CONDITIONS_NOT_SIGNED')) reason = 'terms_not_accepted';
  else if (reasons.includes('INVALID_REQUEST_ID')) reason = 'unknown_request';
  else if (status === 403 || rpcStatus === 'PERMISSION_DENIED') reason = 'permission_denied';
  else if (status === 404 || rpcStatus === 'NOT_FOUND') reason = 'not_found';
  else if (status === 413) reason = 'too_large';
  else if (status === 400 || rpcStatus === 'INVALID_ARGUMENT') reason = 'invalid_request';
  return { kind: 'refused', reason, status, platformCode: reasons[0] ?? rpcStatus, detail };
}

/** The `reason`s of an error's ErrorInfo details and of its BadRequest field violations. */
function reasonsOf(details: unknown): string[] {
  const reasons: string[] = [];
  for (const detail of Array.isArray(details) ? details.map(objectOf) : []) {
    if (typeof detail.reason === 'string') reasons.push(detail.reason);
    const violations = detail.fieldViolations;
    for (const violation of Array.isArray(violations) ? violations.map(objectOf) : [])
      if (typeof violation.reason === 'string') reasons.push(violation.reason);
  }
  return reasons;
}

function accountProblem(account: GoogleAccountRef): DestinationFailure | undefined {
  if (!ACCOUNT_ID.test(account.operatingAccountId)) return localRefusal('The Google Ads account id is not numeric.');
  if (account.loginAccountId && !ACCOUNT_ID.test(account.loginAccountId)) return localRefusal('The manager account id is not numeric.');
  return undefined;
}

/** A request refused before it was sent: status 0. */
function localRefusal(detail: string, reason: RefusalReason = 'invalid_request'): DestinationFailure {
  return { kind: 'refused', reason, status: 0, platformCode: null, detail };
}

function userListOf(body: unknown): DestinationOutcome<GoogleUserList> {
  const list = objectOf(body);
  const resourceName = typeof list.name === 'string' ? list.name : '';
  const id = typeof list.id === 'string' || typeof list.id === 'number' ? String(list.id) : /\/userLists\/(\d+)$/.exec(resourceName)?.[1];
  if (id === undefined || !ACCOUNT_ID.test(id)) return failed(localRefusal('Google gave no user list id.', 'other'));
  const rate = objectOf(objectOf(list.ingestedUserListInfo).contactIdInfo).matchRatePercentage;
  return succeeded({
    id,
    resourceName,
    displayName: typeof list.displayName === 'string' ? list.displayName : '',
    membershipStatus: typeof list.membershipStatus === 'string' ? list.membershipStatus : null,
    matchRatePercentage: typeof rate === 'number' && rate >= 0 && rate <= 100 ? rate : null,
  });
}

const STATES: Record<string, GoogleRequestState> = {
  PROCESSING: 'processing',
  SUCCESS: 'success',
  PARTIAL_SUCCESS: 'partial_success',
  FAILED: 'failed',
};
/** When one request names several destinations, the verdict is the worst of theirs. */
const SEVERITY: GoogleRequestState[] = ['success', 'partial_success', 'unknown', 'processing', 'failed'];

function verdictOf(perDestination: Record<string, unknown>[]): GoogleRequestVerdict {
  const verdict: GoogleRequestVerdict = {
    state: 'success',
    recordCount: null,
    errorCounts: {},
    warningCounts: {},
    uploadMatchRateRange: null,
  };
  for (const destination of perDestination) {
    const state = STATES[String(destination.requestStatus)] ?? 'unknown';
    if (SEVERITY.indexOf(state) > SEVERITY.indexOf(verdict.state)) verdict.state = state;
    addCounts(verdict.errorCounts, objectOf(destination.errorInfo).errorCounts);
    addCounts(verdict.warningCounts, objectOf(destination.warningInfo).warningCounts);
    const ingestion = objectOf(objectOf(destination.audienceMembersIngestionStatus).userDataIngestionStatus);
    const removal = objectOf(objectOf(destination.audienceMembersRemovalStatus).userDataRemovalStatus);
    const records = count(ingestion.recordCount ?? removal.recordCount);
    if (records !== undefined) verdict.recordCount = Math.max(verdict.recordCount ?? 0, records);
    if (typeof ingestion.uploadMatchRateRange === 'string') verdict.uploadMatchRateRange = ingestion.uploadMatchRateRange;
  }
  return verdict;
}

function addCounts(into: Record<string, number>, counts: unknown): void {
  for (const entry of Array.isArray(counts) ? counts.map(objectOf) : []) {
    const records = count(entry.recordCount);
    if (typeof entry.reason === 'string' && records !== undefined) into[entry.reason] = (into[entry.reason] ?? 0) + records;
  }
}

/** An int64 as JSON gives it (a string of digits) or a number. */
function count(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d{1,15}$/.test(value)) return Number(value);
  return undefined;
}
