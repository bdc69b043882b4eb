import { randomInt } from 'node:crypto';
import { appSecretProof } from '../common/http/meta-graph.js';
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
import { META_MAX_ROWS_PER_REQUEST, type MetaRowBatch, type MetaUploadPlan } from './meta-audience-rows.js';

/**
 * Meta's Marketing API customer-file custom audiences (SPEC 10.3), on the Graph API (META_GRAPH_URL,
 * version included) with the caller's access token and, when the app secret is configured,
 * `appsecret_proof` (as src/connections/oauth/platforms/meta-ads.client.ts signs every call).
 *
 * Implements, from developers.facebook.com/docs/marketing-api/audiences/guides/custom-audiences and
 * …/reference/custom-audience/users (and the field list of facebook/facebook-nodejs-business-sdk
 * `src/objects/custom-audience.js`):
 * - `POST act_{ad_account_id}/customaudiences` with `name`, `subtype=CUSTOM`,
 *   `customer_file_source=USER_PROVIDED_ONLY`: answer `{id}`;
 * - `GET {audience_id}?fields=…`: `approximate_count_lower_bound`, `approximate_count_upper_bound`
 *   (older versions give only `approximate_count`, read when the bounds are absent) and
 *   `operation_status` (`{code, description}`; 471: flagged, member updates then fail with code 100,
 *   subcode 1713230);
 * - `POST` / `DELETE {audience_id}/users` with `payload: {schema, data}` and `session: {session_id
 *   (advertiser-chosen 64-bit integer, unique per ad account), batch_seq (from 1, sequential),
 *   last_batch_flag (no batch after it; a session left open closes 90 minutes after its first
 *   batch), estimated_num_total}`; answer `{audience_id, session_id, num_received (the session's
 *   total so far), num_invalid_entries, invalid_entry_samples}`.
 * Errors have Graph's shape `{error: {message, type, code, error_subcode, is_transient}}`, classified
 * by code, not by HTTP status (Meta answers throttling with 400 as often as with 429):
 * throttling 4, 17, 80003, 80004, 613 (and 341) and transient 1, 2 are retried; 190 is the grant
 * (subcodes 458/460 revoked, 463 expired; …/docs/graph-api/guides/error-handling); 200/1870047
 * "Audience Size too Low" refuses a removal that would leave the audience too small (Meta's error
 * reference, and grouparoo/grouparoo PR #1108); 200/1870034, 1870090, 1870092 are the Custom
 * Audience or Business Tools terms. The code list of throttling and transient errors follows
 * rudderlabs/rudder-transformer `src/v0/util/facebookUtils/networkHandler.js`. A throttled answer's
 * wait is `Retry-After` when given, else `x-business-use-case-usage`'s
 * `estimated_time_to_regain_access` (minutes) or `x-ad-account-usage`'s `reset_time_duration`
 * (seconds) (…/docs/graph-api/overview/rate-limiting). Public sources name error 2650 "Failed to
 * update the custom audience" without saying when; it is a plain refusal here.
 */

export interface MetaAudience {
  id: string;
  name: string;
  approximateCountLowerBound: number | null;
  approximateCountUpperBound: number | null;
  operationStatus: { code: number | null; description: string | null };
  /** `operation_status` 471: SPEC 10.3 `status_reason: audience_flagged`. */
  flagged: boolean;
}

/** What Meta said of one accepted batch. */
export interface MetaBatchReceipt<Key> {
  batchSeq: number;
  lastBatch: boolean;
  /** The people whose rows this batch carried, to record as sent. */
  keys: Key[];
  rowsSent: number;
  /** Rows Meta has received in this session so far. */
  numReceived: number | null;
  /** Rows of this batch Meta found wrongly hashed (an estimate, Meta says): never matched, never added. */
  numInvalidEntries: number | null;
}

export interface MetaCustomAudiencesSettings {
  /** Graph API base, version included (META_GRAPH_URL). */
  graphUrl: string;
  timeoutMs: number;
  /** META_MAX_REQUEST_BYTES. */
  maxRequestBytes: number;
  /** The Meta app's secret, for `appsecret_proof`; unset: calls are not signed. */
  appSecret?: string;
  /** A new session id: a positive integer within JSON's safe range, unique per ad account. */
  newSessionId?: () => number;
}

const LABEL = 'Meta Graph';
const NUMERIC_ID = /^\d{1,30}$/;
const THROTTLING = new Set([4, 17, 32, 341, 613, 80003, 80004]);
const TRANSIENT = new Set([1, 2]);
const TERMS = new Set([1870034, 1870090, 1870092]);

export class MetaCustomAudiencesClient {
  private readonly newSessionId: () => number;

  constructor(private readonly settings: MetaCustomAudiencesSettings) {
    // Random 48-bit ids: distinct per ad account in practice, and exact as JSON numbers.
    this.newSessionId = settings.newSessionId ?? (() => randomInt(1, 2 ** 48));
  }

  static fromConfig(
    config: Pick<AppConfig, 'metaGraphUrl' | 'providerTimeoutMs' | 'metaMaxRequestBytes' | 'adPlatforms'>,
  ): MetaCustomAudiencesClient {
    return new MetaCustomAudiencesClient({
      graphUrl: config.metaGraphUrl,
      timeoutMs: config.providerTimeoutMs,
      maxRequestBytes: config.metaMaxRequestBytes,
      appSecret: config.adPlatforms.metaAds?.appSecret,
    });
  }

  get maxRequestBytes(): number {
    return this.settings.maxRequestBytes;
  }

  /** Creates an empty customer-file audience in the ad account (digits, without `act_`). */
  async createAudience(
    accessToken: string,
    adAccountId: string,
    audience: { name: string; description?: string },
  ): Promise<DestinationOutcome<{ id: string }>> {
    if (!NUMERIC_ID.test(adAccountId)) return failed(localRefusal('The ad account id is not numeric.'));
    const body: Record<string, string> = {
      name: audience.name.slice(0, 255),
      subtype: 'CUSTOM',
      customer_file_source: 'USER_PROVIDED_ONLY',
    };
    if (audience.description) body.description = audience.description.slice(0, 1000);
    const answer = await this.call(accessToken, 'POST', `act_${adAccountId}/customaudiences`, {}, body);
    if (!answer.ok) return answer;
    const id = objectOf(answer.value).id;
    if (typeof id !== 'string' || !NUMERIC_ID.test(id)) return failed(localRefusal('Meta gave no audience id.', 'other'));
    return succeeded({ id });
  }

  /** The audience's size bounds and operation status. */
  async getAudience(accessToken: string, audienceId: string): Promise<DestinationOutcome<MetaAudience>> {
    if (!NUMERIC_ID.test(audienceId)) return failed(localRefusal('The audience id is not numeric.'));
    const answer = await this.call(accessToken, 'GET', audienceId, {
      fields: 'id,name,approximate_count_lower_bound,approximate_count_upper_bound,approximate_count,operation_status',
    });
    if (!answer.ok) return answer;
    const audience = objectOf(answer.value);
    const status = objectOf(audience.operation_status);
    const code = integer(status.code ?? status.status);
    const approximate = integer(audience.approximate_count);
    return succeeded({
      id: typeof audience.id === 'string' ? audience.id : audienceId,
      name: typeof audience.name === 'string' ? audience.name : '',
      approximateCountLowerBound: integer(audience.approximate_count_lower_bound) ?? approximate,
      approximateCountUpperBound: integer(audience.approximate_count_upper_bound) ?? approximate,
      operationStatus: { code, description: typeof status.description === 'string' ? status.description.slice(0, 300) : null },
      flagged: code === 471,
    });
  }

  /**
   * A session that sends `plan` (from planMetaUpload with this client's maxRequestBytes) to the
   * audience, one batch per `sendNext`: `add` is `POST …/users`, `remove` is `DELETE …/users`.
   */
  openSession<Key>(audienceId: string, operation: 'add' | 'remove', plan: MetaUploadPlan<Key>): MetaUploadSession<Key> {
    return new MetaUploadSession(this, audienceId, operation, plan, this.newSessionId());
  }

  /** One batch of a session; MetaUploadSession decides the session fields. */
  async sendBatch<Key>(
    accessToken: string,
    request: {
      audienceId: string;
      operation: 'add' | 'remove';
      schema: readonly string[];
      batch: MetaRowBatch<Key>;
      session: { session_id: number; batch_seq: number; last_batch_flag: boolean; estimated_num_total: number };
    },
  ): Promise<DestinationOutcome<MetaBatchReceipt<Key>>> {
    const { batch, session } = request;
    if (!NUMERIC_ID.test(request.audienceId)) return failed(localRefusal('The audience id is not numeric.'));
    if (batch.rows.length === 0 || batch.rows.length > META_MAX_ROWS_PER_REQUEST)
      return failed(localRefusal(`A request takes 1 to ${META_MAX_ROWS_PER_REQUEST} rows.`));
    if (batch.rows.some((row) => row.length !== request.schema.length))
      return failed(localRefusal('Every row has a value per schema key.'));
    const body = JSON.stringify({ payload: { schema: request.schema, data: batch.rows }, session });
    if (Buffer.byteLength(body) > this.settings.maxRequestBytes)
      return failed(localRefusal(`The request is larger than ${this.settings.maxRequestBytes} bytes.`, 'too_large'));
    const answer = await this.call(accessToken, request.operation === 'add' ? 'POST' : 'DELETE', `${request.audienceId}/users`, {}, body);
    if (!answer.ok) return answer;
    const receipt = objectOf(answer.value);
    return succeeded({
      batchSeq: session.batch_seq,
      lastBatch: session.last_batch_flag,
      keys: batch.keys,
      rowsSent: batch.rows.length,
      numReceived: integer(receipt.num_received),
      numInvalidEntries: integer(receipt.num_invalid_entries),
    });
  }

  /** One Graph call; the token travels in the query, as the project's other Graph calls send it, and never reaches an error. */
  private async call(
    accessToken: string,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    query: Record<string, string>,
    body?: Record<string, string> | string,
  ): Promise<DestinationOutcome<unknown>> {
    const url = new URL(`${this.settings.graphUrl}/${path}`);
    url.search = new URLSearchParams({
      ...query,
      access_token: accessToken,
      ...(this.settings.appSecret && { appsecret_proof: appSecretProof(this.settings.appSecret, accessToken) }),
    }).toString();
    // A members body is JSON (its payload nests); a create is a plain form, as Meta's examples send it.
    const init: RequestInit = { method, headers: { accept: 'application/json' } };
    if (typeof body === 'string') {
      init.headers = { accept: 'application/json', 'content-type': 'application/json' };
      init.body = body;
    } else if (body !== undefined) {
      init.headers = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' };
      init.body = new URLSearchParams(body).toString();
    }
    let answer: Awaited<ReturnType<typeof providerCall>>;
    try {
      answer = await providerCall(url, init, this.settings.timeoutMs, LABEL);
    } catch (error) {
      if (error instanceof ProviderUnreachableError) return failed(unreachable(error));
      throw error;
    }
    const error = objectOf(answer.body).error;
    if (answer.status >= 200 && answer.status < 300 && error === undefined && typeof answer.body === 'object' && answer.body !== null)
      return succeeded(answer.body);
    return failed(classifyMetaFailure(answer.status, answer.body, answer.headers));
  }
}

/**
 * The batches of one upload to one audience under one session id. A failed `sendNext` leaves the
 * session where it was, so calling it again resends the same batch with the same `batch_seq` (what
 * a retry after a time-out must do); the last batch carries `last_batch_flag`, after which the
 * session is done. `snapshot` is what a job keeps to report progress.
 */
export class MetaUploadSession<Key> {
  private next = 0;

  constructor(
    private readonly client: MetaCustomAudiencesClient,
    readonly audienceId: string,
    readonly operation: 'add' | 'remove',
    readonly plan: MetaUploadPlan<Key>,
    readonly sessionId: number,
  ) {}

  get done(): boolean {
    return this.next >= this.plan.batches.length;
  }

  /** The `batch_seq` the next `sendNext` sends (from 1). */
  get nextBatchSeq(): number {
    return this.next + 1;
  }

  async sendNext(accessToken: string): Promise<DestinationOutcome<MetaBatchReceipt<Key>>> {
    const batch = this.plan.batches[this.next];
    if (batch === undefined) return failed(localRefusal('The session has sent all its batches.'));
    const outcome = await this.client.sendBatch(accessToken, {
      audienceId: this.audienceId,
      operation: this.operation,
      schema: this.plan.schema,
      batch,
      session: {
        session_id: this.sessionId,
        batch_seq: this.next + 1,
        last_batch_flag: this.next === this.plan.batches.length - 1,
        estimated_num_total: this.plan.totalRows,
      },
    });
    if (outcome.ok) this.next++;
    return outcome;
  }

  snapshot(): { sessionId: number; batchesSent: number; batches: number } {
    return { sessionId: this.sessionId, batchesSent: this.next, batches: this.plan.batches.length };
  }
}

/** A Graph error answer (or anything else that is not a 2xx object) as SPEC 10.3 classifies it. */
export function classifyMetaFailure(status: number, body: unknown, headers: Headers): DestinationFailure {
  const error = objectOf(objectOf(body).error);
  const code = integer(error.code);
  const subcode = integer(error.error_subcode);
  const detail = safeDetail(error.error_user_msg ?? error.message, `${LABEL} answered ${status}.`);
  const platformCode = code === null ? null : subcode === null ? String(code) : `${code}/${subcode}`;
  if (code === 190 || (code === null && status === 401)) {
    const grant = subcode === 458 || subcode === 460 ? 'revoked' : subcode === 463 ? 'expired' : 'invalid';
    return { kind: 'grant_lost', grant, detail };
  }
  // A body too large stays too large however often it is sent, whatever code comes with it.
  if (status === 413) return { kind: 'refused', reason: 'too_large', status, platformCode, detail };
  if ((code !== null && THROTTLING.has(code)) || (code === null && status === 429))
    return { kind: 'retryable', reason: 'rate_limited', retryAfterSeconds: throttleWait(headers), platformCode, detail };
  if ((code !== null && TRANSIENT.has(code)) || error.is_transient === true)
    return {
      kind: 'retryable',
      reason: 'server_error',
      retryAfterSeconds: retryAfterSeconds(headers.get('retry-after')) ?? null,
      platformCode,
      detail,
    };
  let reason: RefusalReason = 'other';
  if (code === 200 && subcode === 1870047) reason = 'audience_too_small';
  else if (code === 100 && subcode === 1713230) reason = 'audience_flagged';
  else if (subcode !== null && TERMS.has(subcode)) reason = 'terms_not_accepted';
  else if ((code === 100 && subcode === 33) || code === 803 || status === 404) reason = 'not_found';
  else if (code === 200 || code === 294 || code === 10 || status === 403) reason = 'permission_denied';
  else if (code === 100) reason = 'invalid_request';
  return { kind: 'refused', reason, status, platformCode, detail };
}

/** How long a throttled answer asks to wait, in seconds, from the headers Graph sends with it. */
function throttleWait(headers: Headers): number | null {
  const retryAfter = retryAfterSeconds(headers.get('retry-after'));
  if (retryAfter !== undefined) return retryAfter;
  let minutes: number | undefined;
  const businessUsage = parseJson(headers.get('x-business-use-case-usage'));
  for (const entries of Object.values(objectOf(businessUsage)))
    for (const entry of Array.isArray(entries) ? entries.map(objectOf) : []) {
      const wait = integer(entry.estimated_time_to_regain_access);
      if (wait !== null && wait > 0) minutes = Math.max(minutes ?? 0, wait);
    }
  if (minutes !== undefined) return Math.min(minutes * 60, 86_400);
  const reset = integer(objectOf(parseJson(headers.get('x-ad-account-usage'))).reset_time_duration);
  return reset !== null && reset > 0 ? Math.min(reset, 86_400) : null;
}

function parseJson(text: string | null): unknown {
  if (!text || text.length > 10_000) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-negative integer, from a number or a numeric string (Graph gives both), else null. */
function integer(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return Number(value);
  return null;
}

function localRefusal(detail: string, reason: RefusalReason = 'invalid_request'): DestinationFailure {
  return { kind: 'refused', reason, status: 0, platformCode: null, detail };
}
