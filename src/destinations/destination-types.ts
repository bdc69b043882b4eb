import type { ProviderUnreachableError } from '../common/http/provider-call.js';
import type { ConsentValue } from '../people/person.entity.js';

/**
 * What both platform clients of SPEC 10.3 share: the members they take, the outcome every call
 * returns, and how a failure is classified for the sync job that drives them. The clients never
 * retry, wait or log: retries, backoff and rate budgets live once, in the caller (STYLE.md, "one
 * client class per platform behind one interface").
 */

/** One SHA-256 hash: the 32 bytes stored packed on `people` (src/people/person-identifiers.ts), or their 64 lowercase hex digits. */
export type IdentifierHash = Buffer | string;

export const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** The lowercase hex form of a hash, or undefined when it is neither 32 bytes nor 64 lowercase hex digits. */
export function hexOf(hash: IdentifierHash): string | undefined {
  if (typeof hash === 'string') return HEX_SHA256.test(hash) ? hash : undefined;
  return Buffer.isBuffer(hash) && hash.length === 32 ? hash.toString('hex') : undefined;
}

/** A person's consent as stored (SPEC 10.1). */
export interface MemberConsent {
  adUserData: ConsentValue;
  adPersonalization: ConsentValue;
}

/** Why a member was left out of every request before anything was sent. */
export type MemberRejection =
  /** A hash that is not 32 bytes or 64 lowercase hex digits (a raw value, or another encoding). */
  | 'invalid_hash'
  /** A clear field out of shape: region code not ISO 3166-1 alpha-2, postal code empty or too long, mobile ad id not a UUID. */
  | 'invalid_field'
  /** No key this platform takes. */
  | 'unmatchable'
  /** Its row alone is larger than one request may be (Meta's byte limit). */
  | 'too_large'
  /** An ingest of a person who denied `ad_user_data` or `ad_personalization` (SPEC 10.3: sent to no destination). */
  | 'consent_denied';

export interface RejectedMember<Key> {
  key: Key;
  reason: MemberRejection;
}

/**
 * How a call failed, for the caller to act on (SPEC 10.3, "Failures"):
 * - `retryable`: try the same request again later (HTTP 429 and 5xx, time-outs, no answer, Google
 *   `RESOURCE_EXHAUSTED`, Meta throttling codes 4, 17, 80003, 80004, 613 and transient 1, 2),
 *   after `retryAfterSeconds` when the platform said so;
 * - `grant_lost`: the token is dead (HTTP 401, Meta code 190): the connection turns `expired` or
 *   `revoked` (`grant` says which) and only reconnecting helps;
 * - `scope_missing`: a live Google token without the `datamanager` scope: reauthorization with
 *   both scopes fixes it in place;
 * - `refused`: anything else; `reason` names the cases a sync treats apart, `detail` carries the
 *   platform's own message (with anything that looks like a hash, token or email removed).
 */
export type DestinationFailure =
  | { kind: 'retryable'; reason: RetryableReason; retryAfterSeconds: number | null; platformCode: string | null; detail: string }
  | { kind: 'grant_lost'; grant: 'expired' | 'revoked' | 'invalid'; detail: string }
  | { kind: 'scope_missing'; detail: string }
  | { kind: 'refused'; reason: RefusalReason; status: number; platformCode: string | null; detail: string };

export type RetryableReason = 'rate_limited' | 'server_error' | 'unreachable';

export type RefusalReason =
  /** Meta refused a removal because the audience would become too small (code 200, subcode 1870047): count as failed, retry at the next sync. */
  | 'audience_too_small'
  /** Meta flagged the audience (`operation_status` 471; code 100, subcode 1713230): `status_reason: audience_flagged`. */
  | 'audience_flagged'
  /** Customer Match (Google) or Custom Audience (Meta) terms not accepted. */
  | 'terms_not_accepted'
  /** The list, audience or account is unknown, or the token's user may not reach it. */
  | 'not_found'
  | 'permission_denied'
  /** The platform found the request itself wrong (Google `INVALID_ARGUMENT`, Meta code 100). */
  | 'invalid_request'
  /** A body over the platform's size limit. */
  | 'too_large'
  /** Google's `requestStatus:retrieve` does not know the request id (yet). */
  | 'unknown_request'
  | 'other';

export type DestinationOutcome<T> = { ok: true; value: T } | { ok: false; failure: DestinationFailure };

export const succeeded = <T>(value: T): DestinationOutcome<T> => ({ ok: true, value });
export const failed = <T>(failure: DestinationFailure): DestinationOutcome<T> => ({ ok: false, failure });

/** At most this many characters of a platform's message are kept. */
const MAX_DETAIL = 300;

/**
 * A platform's error message made safe to store in `error_detail` and to log: a message may quote
 * what was sent (a hash, an email) or, in a badly behaved proxy, a token. Runs of 32 or more hex,
 * base64 or token characters (a SHA-256 in hex is 64, an OAuth token longer) and anything shaped
 * like an email become `[redacted]`; field paths and error reasons stay readable.
 */
export function safeDetail(message: unknown, fallback: string): string {
  if (typeof message !== 'string' || message.trim() === '') return fallback;
  return message
    .replace(/[^\s@"'<>()[\]{},;:]+@[^\s@"'<>()[\]{},;:]+/g, '[redacted]')
    .replace(/[A-Za-z0-9+/=_-]{32,}/g, '[redacted]')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_DETAIL);
}

/** The items in consecutive slices of at most `size`. */
export function slices<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** A provider that did not answer, or answered 5xx: retryable, after a 503's Retry-After when it gave one. */
export function unreachable(error: ProviderUnreachableError): DestinationFailure {
  return {
    kind: 'retryable',
    reason: error.status === undefined ? 'unreachable' : 'server_error',
    retryAfterSeconds: error.retryAfterSeconds ?? null,
    platformCode: error.status === undefined ? null : String(error.status),
    detail: error.message,
  };
}
